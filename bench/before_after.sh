#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A change to libredist measured against the library before it, in one run: the same benchmark programs (built
# once, from the newer tree) run in interleaved rounds with the older libredist swapped in through
# LD_LIBRARY_PATH (the programs find libredist by RUNPATH, which LD_LIBRARY_PATH overrides), so both libraries see
# the same machine state. The older library must keep the public structures' layout (build it from a git worktree
# of the older commit: cmake -S OLD -B OLD/build -DREDIST_BUILD_BENCH=OFF -DREDIST_BUILD_TESTS=OFF; cmake --build
# OLD/build --target redist redist_scalapack).
#
#   bench/before_after.sh BIN_DIR OLD_LIBRARY_DIR OUT_DIR
#
# A change to the public API (a release that renames entry points or changes structures) cannot swap libraries:
# with OLD_PROGRAMS=DIR the "before" runs take DIR's programs (built from the older tree with its library:
# cmake -S OLD -B OLD/build -DREDIST_BUILD_TESTS=OFF; cmake --build OLD/build --target <programs>; DIR =
# OLD/build/bench) and OLD_LIBRARY_DIR is not read; both programs make the same calls, each through its own API.
#
# Programs: bench_scalapack_sweep (first, second and steady calls against ScaLAPACK), bench_gemm_bench (first call,
# its planning profile and the steady multiply), bench_shared_window_bench (window creation), bench_reshape_bench
# (the 3-D FFT cycle's reshapes against MPI_Alltoallw), bench_exchange_bench (neighbor exchanges of the sparse
# matrices against MPI_Neighbor_alltoallv) and bench_inplace_bench (in-place alltoallv against MPI_Alltoallv).
# Environment:
# RANKS (4), ROUNDS (5), SIZES (4000,8000), SHAPES (square1500,largem), REPS (3), LIMIT (seconds per program, 300),
# MPIEXEC (mpiexec.mpich), MPIEXEC_FLAGS, PROGRAMS (the ones to run: sweep,gemm,window,reshape,exchange,inplace;
# default sweep,gemm,window), RESHAPE_N (128), COSMA (a COSMA library for
# bench_gemm_bench's --cosma: its first and steady calls in the same runs), COSTA (a COSTA library for
# bench_scalapack_sweep's --costa), THREADS (one: OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1, the default;
# default: both unset, as a user's launch without them). Each program's JSON is appended as one line to
# OUT_DIR/{sweep,gemm,window,reshape,exchange,inplace}_{before,after}.jsonl; the output goes to OUT_DIR/log.txt.
# bench/before_after_table.py OUT_DIR prints the medians.
set -uo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BIN_DIR OLD_LIBRARY_DIR OUT_DIR" >&2
  exit 2
fi
bin=$1
old=$2
out=$3
ranks=${RANKS:-4}
rounds=${ROUNDS:-5}
sizes=${SIZES:-4000,8000}
shapes=${SHAPES:-square1500,largem}
reps=${REPS:-3}
limit=${LIMIT:-300}
mpiexec=${MPIEXEC:-mpiexec.mpich}
programs=${PROGRAMS:-sweep,gemm,window}
cosma=()
[ -n "${COSMA:-}" ] && cosma=(--cosma "$COSMA")
costa=()
[ -n "${COSTA:-}" ] && costa=(--costa "$COSTA")
read -r -a flags <<<"${MPIEXEC_FLAGS:-}"
old_programs=${OLD_PROGRAMS:-}
if [ -z "$old_programs" ] && [ ! -e "$old/libredist.so" ]; then
  echo "$0: no libredist.so in $old" >&2
  exit 2
fi
mkdir -p "$out"
case ${THREADS:-one} in
  one) export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 ;;
  default) unset OMP_NUM_THREADS OPENBLAS_NUM_THREADS ;;
  *)
    echo "$0: THREADS is '$THREADS'; expected one or default" >&2
    exit 2
    ;;
esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# One program of one round with one library: its JSON becomes one line of OUT_DIR/NAME_VARIANT.jsonl.
run() {
  local name=$1 variant=$2
  shift 2
  local library_path=""
  if [ "$variant" = before ]; then
    if [ -n "$old_programs" ]; then
      set -- "$old_programs/$(basename "$1")" "${@:2}"
    else
      library_path=$old
    fi
  fi
  echo "== round $round, $variant: $name: $*" >>"$out/log.txt"
  rm -f "$scratch/run.json"
  LD_LIBRARY_PATH=$library_path timeout "$limit" "$mpiexec" -n "$ranks" "${flags[@]}" "$@" --json "$scratch/run.json" \
    >>"$out/log.txt" 2>&1
  echo "== exit $?" >>"$out/log.txt"
  if [ -s "$scratch/run.json" ]; then
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$scratch/run.json" \
      >>"$out/${name}_$variant.jsonl"
  fi
}

for round in $(seq 1 "$rounds"); do
  for variant in before after; do
    [[ ,$programs, == *,sweep,* ]] && run sweep "$variant" "$bin/bench_scalapack_sweep" --n "$sizes" --blocks 32 --reps "$reps" "${costa[@]}"
    [[ ,$programs, == *,gemm,* ]] && run gemm "$variant" "$bin/bench_gemm_bench" --shapes "$shapes" --reps 2 "${cosma[@]}"
    [[ ,$programs, == *,window,* ]] && run window "$variant" "$bin/bench_shared_window_bench" --reps 3
    [[ ,$programs, == *,reshape,* ]] && run reshape "$variant" "$bin/bench_reshape_bench" --n "${RESHAPE_N:-128}" --reps "$reps"
    [[ ,$programs, == *,exchange,* ]] && run exchange "$variant" "$bin/bench_exchange_bench" --iterations 50 --rounds 3
    [[ ,$programs, == *,inplace,* ]] && run inplace "$variant" "$bin/bench_inplace_bench" --reps "$reps"
  done
done
grep -h "^SUMMARY" "$out/log.txt" || true
