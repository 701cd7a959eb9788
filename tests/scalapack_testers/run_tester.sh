#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs one of ScaLAPACK's own testers twice in fresh directories, as shipped (reference) and with
# libredist_scalapack preloaded, and passes only if
#   - the drop-in run really called redist: the dynamic linker bound each listed symbol, looked up from
#     ScaLAPACK or from the tester itself (the PBLAS testers call the routine they test), to
#     libredist_scalapack (LD_DEBUG=bindings; lazy binding, so a binding line means a call was made),
#   - both runs ran the same tests with the same verdicts, every one passed, and there was at least one.
# usage: run_tester.sh MPIEXEC RANKS TESTER INPUT_FILE DROPIN_LIB WORK_DIR SYMBOL...
# REDIST_TEST_PRELOAD (optional) is preloaded into both runs: tests/support/yield_when_idle.c, which lets
# oversubscribed ranks give up the core while MPI waits; it changes no result.
set -uo pipefail
mpiexec=$1 ranks=$2 tester=$3 input=$4 dropin=$5 work=$6
shift 6
symbols=("$@")

rm -rf "$work" && mkdir -p "$work/reference" "$work/dropin/ld" || exit 1

run() {  # dir, command prefix (e.g. env VAR=value...); the tester reads its input from the working directory
  local dir=$1; shift
  cp "$input" "$dir/" || return 1
  (cd "$dir" && "$mpiexec" -n "$ranks" "$@" "$tester" > output.txt 2>&1)
  local rc=$?
  [ $rc -eq 0 ] || { echo "== $dir: exit status $rc"; tail -40 "$dir/output.txt"; return 1; }
}

# A tester's result lines, one per test: its verdict (PASSED/Passed, FAILED/Failed, SKIPPED or Bypass)
# and the test's integer parameters, then its closing counts ("N tests completed and passed ..."); decimals
# (timings, which differ between runs, and residuals) are cut out. Lines with a colon are the testers'
# explanations of their output, not results, except the PBLAS testers' verdicts ("***** Computational
# check: PDGEMM PASSED *****"); their summary table's header names every verdict and is not one. Kept in
# the output's order.
verdicts() {
  { grep -n -E '\b(PASSED|Passed|FAILED|Failed|SKIPPED|Bypass|BYPASS)\b|tests? (completed|skipped)' "$1/output.txt" \
      | grep -v -E '^[0-9]+:.*:|TOTAL TESTS'
    grep -n -E 'check: P[SDCZ][A-Z0-9]+ +(PASSED|FAILED)' "$1/output.txt"; } \
    | sort -t: -k1,1n -u | cut -d: -f2- \
    | sed -E 's/-?[0-9]+\.[0-9]+(E[-+][0-9]+)?//g; s/ +/ /g'
}

yield_lib=${REDIST_TEST_PRELOAD:-}
run "$work/reference" env LD_PRELOAD="$yield_lib" || exit 1
# The variables reach the tester only, through env: launchers spell passing them differently (MPICH's -env,
# Open MPI's -x).
run "$work/dropin" env LD_PRELOAD="$dropin${yield_lib:+ $yield_lib}" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/dropin/ld/b" || exit 1

status=0
for s in "${symbols[@]}"; do
  files=$(grep -l -E "binding file [^ ]*(libscalapack[^ ]*|/$(basename "$tester")) \[0\] to [^ ]*libredist_scalapack[^ ]* \[0\]: normal symbol \`$s'" \
            "$work/dropin/ld/"b.* 2>/dev/null | wc -l)
  if [ "$files" -eq 0 ]; then
    echo "== $s from ScaLAPACK or the tester was never bound to libredist_scalapack: the drop-in was not exercised"
    status=1
  else
    echo "== $s: calls bound to libredist_scalapack on $files of $ranks ranks"
  fi
done

verdicts "$work/reference" > "$work/reference/verdicts.txt"
verdicts "$work/dropin" > "$work/dropin/verdicts.txt"
count() { grep -c -E "$1" "$2"; }
for run_dir in reference dropin; do
  f=$work/$run_dir/verdicts.txt
  echo "== $run_dir: $(count 'PASSED|Passed' "$f") passed, $(count 'FAILED|Failed' "$f") failed," \
       "$(count 'Bypass|BYPASS' "$f") bypassed"
done
if [ "$(count 'PASSED|Passed' "$work/reference/verdicts.txt")" -eq 0 ]; then
  echo "== the reference ran no test: the input selects nothing"
  status=1
fi
if grep -q -E 'FAILED|Failed' "$work/reference/verdicts.txt" "$work/dropin/verdicts.txt"; then
  echo "== failures:"; grep -h -E 'FAILED|Failed' "$work/reference/output.txt" "$work/dropin/output.txt"
  status=1
fi
if ! diff "$work/reference/verdicts.txt" "$work/dropin/verdicts.txt" > "$work/verdicts.diff"; then
  echo "== the drop-in's tests or verdicts differ from the reference's (< reference, > drop-in):"
  cat "$work/verdicts.diff"
  status=1
fi
exit $status
