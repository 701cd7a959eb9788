#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The issue-26 measurements in one command: bench_reshape_bench over every case at each size and rank count,
# then the storage-order pair (x -> y-pencil, plain and with y made contiguous) in interleaved rounds, and the
# targets checked on what was written (bench/reshape_targets.py).
#
#   bench/reshape_sweep.sh BIN_DIR OUT_DIR
#
# Environment: SIZES (256 512), RANKS (2 4 8), ROUNDS (storage-order rounds, 5), REPS (5; 3 at N >= 512),
# LIMIT (seconds per program, 300), MPIEXEC (mpiexec.mpich), MPIEXEC_FLAGS (e.g. "-bind-to core" where each rank
# has a core). Writes OUT_DIR/reshape_bench_n{N}_np{P}.json and OUT_DIR/storage_order/reshape_bench_n{N}_np{P}_
# round{R}.json (the names of bench/results/), the programs' output to OUT_DIR/log.txt. A program cut by LIMIT
# leaves no JSON; the others stand.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BIN_DIR OUT_DIR" >&2
  exit 2
fi
bin=$1
out=$2
read -r -a sizes <<<"${SIZES:-256 512}"
read -r -a ranks <<<"${RANKS:-2 4 8}"
rounds=${ROUNDS:-5}
limit=${LIMIT:-300}
mpiexec=${MPIEXEC:-mpiexec.mpich}
read -r -a flags <<<"${MPIEXEC_FLAGS:-}"
mkdir -p "$out/storage_order"
export OMP_NUM_THREADS=1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

reps_for() { if [ "$1" -ge 512 ]; then echo "${REPS:-3}"; else echo "${REPS:-5}"; fi; }

run() {
  local p=$1 json=$2
  shift 2
  echo "== $(date +%T) -n $p $*" >>"$out/log.txt"
  rm -f "$json"  # a program that fails or is cut leaves no JSON from an earlier run
  timeout "$limit" "$mpiexec" -n "$p" "${flags[@]}" "$bin/bench_reshape_bench" "$@" --json "$json" >>"$out/log.txt" 2>&1
  echo "== exit $?" >>"$out/log.txt"
}

for n in "${sizes[@]}"; do
  for p in "${ranks[@]}"; do
    run "$p" "$out/reshape_bench_n${n}_np${p}.json" --n "$n" --reps "$(reps_for "$n")"
  done
done
for r in $(seq 1 "$rounds"); do
  for n in "${sizes[@]}"; do
    for p in "${ranks[@]}"; do
      run "$p" "$out/storage_order/reshape_bench_n${n}_np${p}_round${r}.json" --n "$n" --reps "$(reps_for "$n")" \
        --cases x_to_y_pencil,x_to_y_pencil_contiguous
    done
  done
done
python3 "$here/reshape_targets.py" "$out"
