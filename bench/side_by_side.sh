#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The issue-27 comparison in one command: interleaved rounds of bench_scalapack_sweep (first calls and steady
# times against ScaLAPACK and COSTA), bench_transform_bench (every case, the local copy against memcpy and
# COSTA) and bench_gemm_bench (the COSMA paper's shapes against ScaLAPACK and COSMA).
#
#   bench/side_by_side.sh BIN_DIR OUT_DIR [COSTA_LIBRARY] [COSMA_LIBRARY]
#
# Environment: RANKS (4), ROUNDS (3), SIZES (4000,8000), SHAPES (square1500,tall,largem,flat,square4000,largek),
# REPS (5 for the transforms; GEMM uses 3), LIMIT (seconds per program, 300), MPIEXEC (mpiexec.mpich) and
# MPIEXEC_FLAGS (e.g. "-bind-to core" where each rank has a core). Each program's JSON is appended as one line to
# OUT_DIR/{sweep,transform,gemm}.jsonl, so a round cut short keeps the rounds before it; the output goes to
# OUT_DIR/log.txt. bench/side_by_side_table.py turns the three files into the medians table.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BIN_DIR OUT_DIR [COSTA_LIBRARY] [COSMA_LIBRARY]" >&2
  exit 2
fi
bin=$1
out=$2
costa=${3:-}
cosma=${4:-}
ranks=${RANKS:-4}
rounds=${ROUNDS:-3}
sizes=${SIZES:-4000,8000}
shapes=${SHAPES:-square1500,tall,largem,flat,square4000,largek}
reps=${REPS:-5}
limit=${LIMIT:-300}
mpiexec=${MPIEXEC:-mpiexec.mpich}
read -r -a flags <<<"${MPIEXEC_FLAGS:-}"
mkdir -p "$out"
export OMP_NUM_THREADS=1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# One program of one round: its JSON becomes one line of OUT_DIR/NAME.jsonl.
run() {
  local name=$1
  shift
  echo "== round $round: $name: $*" >>"$out/log.txt"
  rm -f "$scratch/run.json"
  timeout "$limit" "$mpiexec" -n "$ranks" "${flags[@]}" "$@" --json "$scratch/run.json" >>"$out/log.txt" 2>&1
  local rc=$?
  echo "== exit $rc" >>"$out/log.txt"
  if [ -s "$scratch/run.json" ]; then
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$scratch/run.json" >>"$out/$name.jsonl"
  fi
}

for round in $(seq 1 "$rounds"); do
  run sweep "$bin/bench_scalapack_sweep" --n "$sizes" --blocks 32 --reps "$reps" ${costa:+--costa "$costa"}
  run transform "$bin/bench_transform_bench" --n "$sizes" --reps "$reps" ${costa:+--costa "$costa"}
  run gemm "$bin/bench_gemm_bench" --shapes "$shapes" --reps 3 ${cosma:+--cosma "$cosma"}
done
grep -h "^SUMMARY" "$out/log.txt" || true
