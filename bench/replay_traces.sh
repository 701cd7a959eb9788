#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Replays every trace of bench/traces/ (folders NAME_npR holding trace.<rank>.jsonl) at its rank count through
# ScaLAPACK and redist (build/tools/redist-replay), then tabulates the ratios against issue 57's targets and plots
# them (bench/replay_table.py).
# With --noise-floor the replays run ScaLAPACK on both sides into OUT_DIR/noise_floor/, and the table of OUT_DIR
# gets a column of how far from 1 each class reads when the code is the same (the harness's noise on this machine).
# With --cold every round is a program's one run (redist-replay --cold: grids made again, the drop-in's learned
# classes, checked signatures and plans start empty), into OUT_DIR as usual.
# usage: bench/replay_traces.sh BUILD_DIR OUT_DIR [ROUNDS] [--noise-floor] [--cold]     e.g. bench/replay_traces.sh build /tmp/replay 7
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=$2
rounds=${3:-7}
options=()
replays=$out
for option in "${@:4}"; do
  case $option in
    --noise-floor) options+=(--noise-floor); replays=$out/noise_floor ;;
    --cold) options+=(--cold) ;;
    *) echo "replay_traces.sh: unknown option $option (expected --noise-floor or --cold)" >&2; exit 2 ;;
  esac
done
mkdir -p "$replays"
for trace in "$here"/traces/*_np*/; do
  name=$(basename "$trace")
  ranks=${name##*_np}
  ls "$trace"trace.*.jsonl > /dev/null 2>&1 || continue
  echo "== $name ($ranks ranks)${options:+ ${options[*]}}"
  OMP_NUM_THREADS=1 mpiexec.mpich -n "$ranks" "$build/tools/redist-replay" --rounds "$rounds" "${options[@]}" \
    --json "$replays/$name.json" "$trace"trace.*.jsonl | tee "$replays/$name.txt"
done
# Debian's python3 (its matplotlib draws the figure; scripts/run.sh demo installs it).
/usr/bin/python3 "$here/replay_table.py" "$out"
