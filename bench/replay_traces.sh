#!/usr/bin/env bash
# Replays every trace of bench/traces/ (folders NAME_npR holding trace.<rank>.jsonl) at its rank count through
# ScaLAPACK and redist (build/tools/redist-replay), then tabulates the ratios against issue 57's targets and plots
# them (bench/replay_table.py).
# usage: bench/replay_traces.sh BUILD_DIR OUT_DIR [ROUNDS]     e.g. bench/replay_traces.sh build /tmp/replay 7
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=$2
rounds=${3:-7}
mkdir -p "$out"
for trace in "$here"/traces/*_np*/; do
  name=$(basename "$trace")
  ranks=${name##*_np}
  ls "$trace"trace.*.jsonl > /dev/null 2>&1 || continue
  echo "== $name ($ranks ranks)"
  OMP_NUM_THREADS=1 mpiexec.mpich -n "$ranks" "$build/tools/redist-replay" --rounds "$rounds" \
    --json "$out/$name.json" "$trace"trace.*.jsonl | tee "$out/$name.txt"
done
# Debian's python3 (its matplotlib draws the figure; scripts/run.sh demo installs it).
/usr/bin/python3 "$here/replay_table.py" "$out"
