#!/usr/bin/env bash
# Replays every trace of bench/traces/ (folders NAME_npR holding trace.<rank>.jsonl) at its rank count through
# ScaLAPACK and redist (build/tools/redist-replay), then tabulates the ratios against issue 57's targets and plots
# them (bench/replay_table.py).
# With --noise-floor the replays run ScaLAPACK on both sides into OUT_DIR/noise_floor/, and the table of OUT_DIR
# gets a column of how far from 1 each class reads when the code is the same (the harness's noise on this machine).
# usage: bench/replay_traces.sh BUILD_DIR OUT_DIR [ROUNDS] [--noise-floor]     e.g. bench/replay_traces.sh build /tmp/replay 7
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=$2
rounds=${3:-7}
noise=()
replays=$out
if [ "${4:-}" = --noise-floor ]; then
  noise=(--noise-floor)
  replays=$out/noise_floor
elif [ -n "${4:-}" ]; then
  echo "replay_traces.sh: unknown option $4 (expected --noise-floor)" >&2
  exit 2
fi
mkdir -p "$replays"
for trace in "$here"/traces/*_np*/; do
  name=$(basename "$trace")
  ranks=${name##*_np}
  ls "$trace"trace.*.jsonl > /dev/null 2>&1 || continue
  echo "== $name ($ranks ranks)${noise:+ noise floor}"
  OMP_NUM_THREADS=1 mpiexec.mpich -n "$ranks" "$build/tools/redist-replay" --rounds "$rounds" "${noise[@]}" \
    --json "$replays/$name.json" "$trace"trace.*.jsonl | tee "$replays/$name.txt"
done
# Debian's python3 (its matplotlib draws the figure; scripts/run.sh demo installs it).
/usr/bin/python3 "$here/replay_table.py" "$out"
