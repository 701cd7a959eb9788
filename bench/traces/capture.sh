#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Captures the call traces of bench/traces/ from real ScaLAPACK programs run unmodified with the drop-in preloaded
# (REDIST_TRACE=calls): Debian's ScaLAPACK testers (package scalapack-mpi-test) of the symmetric
# eigensolver (xdsep: PxSYEV/PxSYEVX/PxSYEVD, whose internals call p?gemm and p?gemr2d) and the SVD
# (xdsvd), at 2 and 4 ranks on several grids and block sizes (their workspace is fixed: N at most about 250).
# (xzsep on a 2 x 1 grid reached none of the drop-in's symbols: no complex trace.) Then bench/traces/solver_driver.cpp,
# built here with mpicxx.mpich against Debian's ScaLAPACK: pdsyevd, pdgesvd and pdpotrf + pdpotri at N = 500-4000 (beyond
# the testers' fixed workspace) on 2 x 1, 2 x 2 and 3 x 2 grids, and the complex pzheevd and pzgetrf + pzgetri (the
# complex traces: pzgemm).
# Each trace is a folder NAME_npR/ of R files trace.<rank>.jsonl; bench/replay_traces.sh replays them all.
# usage: bench/traces/capture.sh BUILD_DIR [TRACES_DIR]   (BUILD_DIR: a build with libredist_scalapack)
set -euo pipefail
build=$(cd "$1" && pwd)
traces=$(cd "${2:-$(dirname "$0")}" && pwd)
testers=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests
dropin=$build/src/scalapack_dropin/libredist_scalapack.so
inputs=$(cd "$(dirname "$0")/../../tests/scalapack_testers" && pwd)
[ -x "$testers/xdsep" ] || { echo "capture.sh: needs Debian's scalapack-mpi-test ($testers)" >&2; exit 1; }

# capture NAME RANKS TESTER TEMPLATE VAR=VALUE...: the tester's input from the template (tests/scalapack_testers),
# run in a scratch folder, its trace kept in TRACES_DIR/NAME_npRANKS.
capture() {
  local name=$1 ranks=$2 tester=$3 template=$4; shift 4
  local work input out=$traces/${name}_np$ranks
  work=$(mktemp -d)
  input=$work/$(basename "$template" .in)
  sed -e "s/@RANKS@/$ranks/" "$inputs/$template" > "$input"
  for assignment in "$@"; do sed -i "s/@${assignment%%=*}@/${assignment#*=}/" "$input"; done
  rm -rf "$out" && mkdir -p "$out"
  (cd "$work" && OMP_NUM_THREADS=1 mpiexec.mpich -n "$ranks" -env LD_PRELOAD "$dropin" -env REDIST_TRACE calls \
     -env REDIST_TRACE_FILE "$out/trace.%r.jsonl" "$testers/$tester" > output.txt 2> summary.txt)
  grep -qE "tests completed and passed|^Passed" "$work/output.txt" && ! grep -qE "FAILED|^Failed" "$work/output.txt" \
    || { cat "$work/output.txt"; exit 1; }
  echo "== $name at $ranks ranks: $(cat "$out"/trace.*.jsonl | wc -l) lines"
  sed -n '/^redist trace/,$p' "$work/summary.txt"
  rm -rf "$work"
}

capture xdsep_n200 4 xdsep SEP.dat.in SEP_N=200 SEP_UPLO=L SEP_GRIDS=2 "SEP_P=2 4" "SEP_Q=2 1" "SEP_NB=32 16"
capture xdsep_n240 2 xdsep SEP.dat.in SEP_N=240 SEP_UPLO=U SEP_GRIDS=2 "SEP_P=2 1" "SEP_Q=1 2" "SEP_NB=24 32"
capture xdsvd_200x150 4 xdsvd SVD.dat.in SVD_M=200 SVD_N=150 SVD_P=2 SVD_Q=2 SVD_NB=24

# The solver driver: built once, each run's trace kept like a tester's.
driver=$(mktemp -d)/solver_driver
mpicxx.mpich -O2 -o "$driver" "$(dirname "$0")/solver_driver.cpp" -lscalapack-mpich -llapack -lblas
solver() {  # NAME RANKS N NB P Q ROUTINES
  local name=$1 ranks=$2 out=$traces/${1}_np$2
  rm -rf "$out" && mkdir -p "$out"
  OMP_NUM_THREADS=1 mpiexec.mpich -n "$ranks" -env LD_PRELOAD "$dropin" -env REDIST_TRACE calls \
    -env REDIST_TRACE_FILE "$out/trace.%r.jsonl" "$driver" "$3" "$4" "$5" "$6" "$7" > "$out.results" 2> "$out.summary" \
    || { cat "$out.results" "$out.summary"; echo "solver_driver: failed" >&2; exit 1; }
  cat "$out.results"
  echo "== $name at $ranks ranks: $(cat "$out"/trace.*.jsonl | wc -l) lines"
  sed -n '/^redist trace/,$p' "$out.summary"
  rm -f "$out.summary" "$out.results"
}
solver solver_n1000_2x1 2 1000 32 2 1 syevd,gesvd,potri
solver solver_n1000_2x2 4 1000 32 2 2 syevd,gesvd,potri
solver solver_n1000_3x2 6 1000 32 3 2 syevd,gesvd,potri
solver solver_n500_3x2 6 500 32 3 2 syevd,gesvd,potri,heevd,getri
solver solver_n2000_2x1 2 2000 32 2 1 syevd,gesvd,potri,heevd,getri
solver solver_n4000_2x1 2 4000 64 2 1 syevd,potri,getri
solver solver_complex_n1000_2x1 2 1000 32 2 1 heevd,getri
solver solver_complex_n1000_2x2 4 1000 32 2 2 heevd,getri
rm -rf "$(dirname "$driver")"
