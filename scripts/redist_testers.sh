#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds ScaLAPACK's own REDIST testers (xigemr..xzgemr for p?gemr2d, xitrmr..xztrmr for p?trmr2d) from
# an extracted reference source tree, links them against Debian's MPICH ScaLAPACK, and runs each one as
# shipped ("reference") and, with --dropin, with libredist_scalapack preloaded ("dropin").
#
# usage: bash scripts/redist_testers.sh SCALAPACK_SOURCE_DIR WORK_DIR [--dropin LIB] [--ranks N]
#            [--input-gemr FILE] [--input-trmr FILE] [--types "i s d c z"] [--timeout SECONDS]
#
#   SCALAPACK_SOURCE_DIR  a reference ScaLAPACK tree holding REDIST/TESTING (p?gemrdrv.c, p?trmrdrv.c,
#                         redist.h, GEMR2D.dat, TRMR2D.dat); e.g. from a git clone of Reference-ScaLAPACK:
#                         git -C scalapack archive HEAD REDIST | tar -x -C /tmp/scalapack-src
#   WORK_DIR              testers go to WORK_DIR/bin, runs to WORK_DIR/runs/<tester>/<mode>/ (output.txt)
#   --dropin LIB          also run every tester with LD_PRELOAD=LIB (mpiexec -env, so every rank has it)
#   --ranks N             MPI ranks per run (default 4); the inputs' grids must fit (p*q <= N)
#   --input-gemr/-trmr    input files (default: the tree's GEMR2D.dat / TRMR2D.dat); copied into each
#                         run directory as GEMR2D.dat / TRMR2D.dat, the names the testers open
#   --types               which element types (default "i s d c z")
#   --timeout             seconds per mpiexec (default 600)
# Environment: MPICC (default mpicc.mpich), MPIEXEC (default mpiexec.mpich).
#
# Prints one line per tester and mode, e.g. "xdgemr reference: 90 passed, 0 failed". A tester prints,
# on rank 0, one verdict per test: "TEST PASSED OK" or "  => Total number of redistribution errors = K".
# A run is bad if mpiexec fails or times out, if the verdicts do not add up to the input's number of
# tests (a crash or abort part way), or if any test failed; with --dropin, the two modes must also give
# the same verdict for every test, and the tester's Cp?gemr2d/Cp?trmr2d calls must have been bound to the
# drop-in (LD_DEBUG=bindings). Exit status 0 only if every run is good.
#
# Nothing from ScaLAPACK is copied into this repository: the testers are compiled from SCALAPACK_SOURCE_DIR.
set -euo pipefail

usage() { sed -n '6,7p' "$0" | sed 's/^# //' >&2; exit 2; }
[ $# -ge 2 ] || usage
src=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
shift 2
dropin="" ranks=4 types="i s d c z" timeout_s=600
input_gemr=$src/REDIST/TESTING/GEMR2D.dat
input_trmr=$src/REDIST/TESTING/TRMR2D.dat
while [ $# -gt 0 ]; do
  case $1 in
    --dropin) dropin=$(realpath "$2"); shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --input-gemr) input_gemr=$(realpath "$2"); shift 2 ;;
    --input-trmr) input_trmr=$(realpath "$2"); shift 2 ;;
    --types) types=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
mpicc=${MPICC:-mpicc.mpich}
mpiexec=${MPIEXEC:-mpiexec.mpich}
testing=$src/REDIST/TESTING
[ -f "$testing/redist.h" ] || { echo "no REDIST/TESTING/redist.h under $src" >&2; exit 2; }
[ -z "$dropin" ] || [ -f "$dropin" ] || { echo "no drop-in library at $dropin" >&2; exit 2; }
for f in "$input_gemr" "$input_trmr"; do [ -f "$f" ] || { echo "no input file $f" >&2; exit 2; }; done

# --- build ----------------------------------------------------------------------------------------------
# redist.h defines Int as int unless told otherwise, which matches Debian's 32-bit-integer ScaLAPACK. The
# drivers call the C entry points Cp?gemr2d / Cp?trmr2d, plus BLACS's C interface (Cblacs_*, Cigebs2d...),
# all in libscalapack-mpich. -w: the 1995 K&R-style drivers warn a lot (implicit int, old declarations).
libs=$(pkg-config --libs scalapack-mpich)
mkdir -p "$work/bin"
for t in $types; do
  for kind in gemr trmr; do
    exe=$work/bin/x$t$kind
    drv=$testing/p$t${kind}drv.c
    [ -f "$drv" ] || { echo "no $drv" >&2; exit 2; }
    if [ ! -x "$exe" ] || [ "$drv" -nt "$exe" ]; then
      echo "== compiling $(basename "$exe")"
      # shellcheck disable=SC2086  # $libs is a list of flags
      "$mpicc" -O2 -w -I"$testing" -o "$exe" "$drv" $libs
    fi
  done
done

# --- run ------------------------------------------------------------------------------------------------
# The number of tests an input declares: the first line not starting with '#' (getparam's rule).
declared() { awk '!/^#/ { print $1 + 0; exit }' "$1"; }
# The verdicts, in order, one per line: "ok" or "errors K".
verdicts() {
  sed -n -E 's/^TEST PASSED OK.*/ok/p; s/^ *=> Total number of redistribution errors = *([0-9]+).*/errors \1/p' "$1"
}

status=0
run() {  # tester kind input mode
  local tester=$1 kind=$2 input=$3 mode=$4
  local dir=$work/runs/$tester/$mode name rc=0 extra=()
  name=$(echo "$kind" | tr a-z A-Z)2D.dat
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$input" "$dir/$name"
  if [ "$mode" = dropin ]; then
    mkdir -p "$dir/ld"
    extra=(-env LD_PRELOAD "$dropin" -env LD_DEBUG bindings -env LD_DEBUG_OUTPUT "$dir/ld/b")
  fi
  (cd "$dir" && OMP_NUM_THREADS=1 timeout "$timeout_s" "$mpiexec" -n "$ranks" "${extra[@]}" \
     "$work/bin/$tester" > output.txt 2>&1) || rc=$?
  verdicts "$dir/output.txt" > "$dir/verdicts.txt"
  local passed failed expected
  passed=$(grep -c '^ok' "$dir/verdicts.txt" || true)
  failed=$(grep -c '^errors' "$dir/verdicts.txt" || true)
  expected=$(declared "$input")
  local note=""
  if [ "$rc" -eq 124 ]; then note+=", timed out after ${timeout_s}s"
  elif [ "$rc" -ne 0 ]; then note+=", exit status $rc"; fi
  if [ $((passed + failed)) -ne "$expected" ]; then note+=", $((passed + failed)) of $expected tests ran"; fi
  if [ "$mode" = dropin ]; then
    # The tester calls Cp?gemr2d / Cp?trmr2d for every test (even empty ones). Lazy binding: a binding
    # line from the tester to the preloaded library means the drop-in's symbol was really called.
    local sym=Cp${tester:1:1}${kind}2d
    if ! grep -q -E "binding file [^ ]*/$tester \[0\] to [^ ]*$(basename "$dropin")[^ ]* \[0\]: normal symbol \`$sym'" \
         "$dir"/ld/b.* 2>/dev/null; then
      note+=", $sym was never bound to the drop-in"
    fi
  fi
  echo "$tester $mode: $passed passed, $failed failed$note"
  if [ -n "$note" ] || [ "$failed" -ne 0 ]; then
    status=1
    # What the tester or the library said beyond its usual lines (stderr is merged into output.txt),
    # each time after the parameters of the test it came in: the first 10 such lines, at most 2 of the
    # tester's per-element "Error element number" lines.
    awk '/^TEST PASSED OK|TEST #|TESTER for|tests *$|m   n  m0|^ *$/ { next }
         NF >= 22 && $1 ~ /^[0-9]+$/ && $22 ~ /^[0-9]+$/ { test = $0; shown = 0; next }
         /Error element number/ && e++ >= 2 { next }
         n < 10 { if (test != "" && !shown) { print "    test:" test; shown = 1; n++ }
                  if (n++ < 10) print "    " $0 }' "$dir/output.txt"
  fi
}

for t in $types; do
  for kind in gemr trmr; do
    tester=x$t$kind
    input=$input_gemr
    [ "$kind" = trmr ] && input=$input_trmr
    run "$tester" "$kind" "$input" reference
    if [ -n "$dropin" ]; then
      run "$tester" "$kind" "$input" dropin
      if ! cmp -s "$work/runs/$tester/reference/verdicts.txt" "$work/runs/$tester/dropin/verdicts.txt"; then
        echo "$tester: reference and dropin verdicts differ (first difference below: test number, verdicts)"
        diff <(nl -ba "$work/runs/$tester/reference/verdicts.txt") <(nl -ba "$work/runs/$tester/dropin/verdicts.txt") \
          | awk 'n++ < 4 { print "    " $0 }' || true
        status=1
      fi
    fi
  done
done
exit $status
