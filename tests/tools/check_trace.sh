#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# REDIST_TRACE on an unmodified ScaLAPACK program linked with the drop-in (tests/fortran/dropin_program.f90: one
# PDGEMR2D, PDTRMR2D, PDTRAN and PDGEMM each, the PDGEMM small enough for ScaLAPACK): the summary printed at
# MPI_Finalize (Fortran's MPI_FINALIZE reaches the drop-in's MPI_Finalize), the calls files (one JSON line per call
# per rank, the rank in the name), a trace file that cannot be written (reported, not fatal), and a REDIST_TRACE
# spelling that does not exist (reported, tracing off); then redist-replay on the calls files: every call re-run through
# ScaLAPACK and through redist with the same results, and traces of the wrong rank count refused.
# usage: check_trace.sh MPIEXEC RANKS PROGRAM WORK_DIR REPLAY
set -uo pipefail
mpiexec=$1 ranks=$2 program=$3 work=$4 replay=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "check_trace: $*" >&2; exit 1; }

run() {  # name, environment assignments...; the program's stdout and stderr in WORK_DIR/name.{out,err}
  local name=$1; shift
  env OMP_NUM_THREADS=1 "$@" "$mpiexec" -n "$ranks" "$program" > "$work/$name.out" 2> "$work/$name.err" \
    || { cat "$work/$name.out" "$work/$name.err"; fail "$name: exit status $?"; }
  grep -q "^ *dropin_program: 0 wrong elements" "$work/$name.out" || { cat "$work/$name.out"; fail "$name: wrong results"; }
}

# The summary: one row per entry point, every rank, one call each.
run summary REDIST_TRACE=summary
cat "$work/summary.err"
grep -q "^redist trace (REDIST_TRACE=summary): $ranks ranks\? of MPI_COMM_WORLD" "$work/summary.err" || fail "no summary header"
# PDTRAN's transpose is of a size learned per class: its first call is redist's trial, or ScaLAPACK's where the
# ranks share cores (more of them than the host has CPUs).
for row in "PDGEMR2D +redist/[a-z_]+" "PDTRMR2D +redist/[a-z_]+" "PDTRAN +(redist/[a-z_]+|delegated)" "PDGEMM +delegated"; do
  grep -E -q "^$row +$ranks +1 " "$work/summary.err" || fail "no summary row '$row' with $ranks ranks and 1 call"
done
[ "$(grep -c '^redist trace' "$work/summary.err")" = 1 ] || fail "the summary was printed more than once"

# The calls files: one per rank, a JSON object per call with its arguments, in the program's order.
run calls REDIST_TRACE=calls "REDIST_TRACE_FILE=$work/trace.%r.jsonl"
grep -q "^redist trace (REDIST_TRACE=calls)" "$work/calls.err" || fail "calls: no summary"
python3 - "$work" "$ranks" <<'PY' || fail "calls: the trace files are not as expected"
import json, sys
work, ranks = sys.argv[1], int(sys.argv[2])
for rank in range(ranks):
    lines = [json.loads(line) for line in open(f"{work}/trace.{rank}.jsonl")]
    entries = [line["entry"] for line in lines]
    assert entries == ["PDGEMR2D", "PDTRMR2D", "PDTRAN", "PDGEMM"], (rank, entries)
    assert [line["seq"] for line in lines] == [0, 1, 2, 3], lines
    assert all(line["rank"] == rank for line in lines), lines
    assert lines[3]["path"] == "delegated" and lines[0]["path"] == "redist", lines
    assert lines[0]["args"]["m"] == 44 and len(lines[0]["args"]["desca"]) == 9, lines[0]
    assert lines[3]["args"]["transa"] == "N" and lines[3]["args"]["grid"][4] == ranks, lines[3]
print(f"check_trace: {ranks} trace files, 4 calls each, as made")
PY

# A trace file that cannot be written: said once per rank, and the program runs as without tracing.
run unwritable REDIST_TRACE=calls "REDIST_TRACE_FILE=$work/no-such-directory/trace.%r.jsonl"
[ "$(grep -c 'cannot write the trace file' "$work/unwritable.err")" = "$ranks" ] || fail "unwritable: not said once per rank"

# A mode that does not exist: said, and nothing traced.
run unknown REDIST_TRACE=everything
grep -q "REDIST_TRACE: unknown trace mode 'everything': expected 'off', 'summary' or 'calls'" \
  "$work/unknown.err" || { cat "$work/unknown.err"; fail "unknown: no message"; }
! grep -q '^redist trace' "$work/unknown.err" || fail "unknown: traced all the same"
# The calls files replayed: the four calls in four classes, ScaLAPACK's and redist's results alike.
OMP_NUM_THREADS=1 "$mpiexec" -n "$ranks" "$replay" --rounds 2 --json "$work/replay.json" "$work"/trace.*.jsonl \
  > "$work/replay.out" 2>&1 || { cat "$work/replay.out"; fail "replay: exit status $?"; }
cat "$work/replay.out"
grep -q "^SUMMARY redist-replay: 4 classes, .*results agree$" "$work/replay.out" || fail "replay: no agreeing summary"
python3 - "$work/replay.json" <<'PY' || fail "replay: the JSON is not as expected"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["results_agree"] and len(r["classes"]) == 4, r
assert sorted(c["class"].split()[0] for c in r["classes"]) == ["PDGEMM", "PDGEMR2D", "PDTRAN", "PDTRMR2D"], r
assert all(c["calls"] == 1 and c["scalapack_seconds"] > 0 and c["redist_seconds"] > 0 for c in r["classes"]), r
# the path each call took in the replay, as the trace of its extra run says
assert all(len(c["replayed_paths"]) == 1 and c["replayed_paths"][0].split("/")[0] in ("redist", "delegated", "local")
           for c in r["classes"]), r
PY
# The noise floor: ScaLAPACK on both sides, so redist is never called (its calls traced: none).
REDIST_TRACE=calls REDIST_TRACE_FILE="$work/noise.%r.jsonl" OMP_NUM_THREADS=1 "$mpiexec" -n "$ranks" "$replay" \
  --rounds 2 --noise-floor --json "$work/noise.json" "$work"/trace.*.jsonl > "$work/noise.out" 2>&1 \
  || { cat "$work/noise.out"; fail "noise floor: exit status $?"; }
grep -q "^SUMMARY redist-replay: 4 classes, whole trace ScaLAPACK/ScaLAPACK (noise floor) .*results agree$" \
  "$work/noise.out" || { cat "$work/noise.out"; fail "noise floor: no agreeing summary"; }
! cat "$work"/noise.*.jsonl 2> /dev/null | grep -q . || fail "noise floor: redist was called"
python3 - "$work/noise.json" <<'PY' || fail "noise floor: the JSON is not as expected"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["noise_floor"] is True and r["results_agree"] and len(r["classes"]) == 4, r
assert all(c["replayed_paths"] == ["ScaLAPACK (noise floor)"] and c["redist_seconds"] > 0 for c in r["classes"]), r
PY
# Cold rounds (--cold): each round a program's one run on grids made again, so redist's copy plans anew every round
# (its plan-cache outcome, traced: a miss each time, where the warm replay above hit after its first round).
REDIST_TRACE=calls REDIST_TRACE_FILE="$work/cold.%r.jsonl" OMP_NUM_THREADS=1 "$mpiexec" -n "$ranks" "$replay" \
  --rounds 2 --cold --json "$work/cold.json" "$work"/trace.*.jsonl > "$work/cold.out" 2>&1 \
  || { cat "$work/cold.out"; fail "cold: exit status $?"; }
grep -q "each a program's one run (--cold)" "$work/cold.out" && grep -q "^SUMMARY redist-replay: 4 classes, .*results agree$" \
  "$work/cold.out" || { cat "$work/cold.out"; fail "cold: no agreeing summary of cold rounds"; }
copies=$(grep -c '"entry":"PDGEMR2D"' "$work/cold.0.jsonl")
misses=$(grep '"entry":"PDGEMR2D"' "$work/cold.0.jsonl" | grep -c '"plan_cache":"miss"')
[ "$copies" -gt 1 ] && [ "$misses" = "$copies" ] || fail "cold: $misses plan-cache misses in $copies copies (expected one a round)"
# Traces of another rank count: refused with status 2 before anything runs.
"$mpiexec" -n "$ranks" "$replay" "$work/trace.0.jsonl" "$work/no-such-file" > "$work/refused.out" 2>&1
[ $? = 2 ] || { cat "$work/refused.out"; fail "replay: a missing trace file was not refused with status 2"; }
if [ "$ranks" -gt 1 ]; then
  "$mpiexec" -n "$ranks" "$replay" "$work/trace.0.jsonl" > "$work/refused.out" 2>&1
  [ $? = 2 ] && grep -q "the traces are of 1 ranks" "$work/refused.out" \
    || { cat "$work/refused.out"; fail "replay: traces of 1 rank replayed at $ranks"; }
fi
echo "check_trace: passed at $ranks ranks"
