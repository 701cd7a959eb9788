#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The watchdog of redist's waits (docs/errors.md): a rank that comes late is reported by the others once and the
# call completes (REDIST_TIMEOUT_ACTION=warn, the default); a rank that skips the call leaves the others waiting
# until the watchdog ends the job (abort), set from the environment or by redist::set_timeout; a plan's own
# timeout_seconds replaces the process's; 0 turns it off; an unusable value is said and the default kept.
# usage: check_watchdog.sh MPIEXEC RANKS PROBE WORK_DIR     (RANKS >= 2: someone must wait)
set -u
mpiexec=$1 ranks=$2 probe=$3 work=$4
mkdir -p "$work"
fail() { echo "check_watchdog: $*" >&2; exit 1; }
# run NAME MODE [VAR=VALUE...]: the probe at RANKS ranks, bounded by `timeout` (a hang fails the test, not ctest).
run() {
  local name=$1 mode=$2
  shift 2
  env -u REDIST_TIMEOUT -u REDIST_TIMEOUT_ACTION OMP_NUM_THREADS=1 "$@" timeout 120 "$mpiexec" -n "$ranks" "$probe" \
    "$mode" > "$work/$name.out" 2> "$work/$name.err"
  echo $? > "$work/$name.status"
  [ "$(cat "$work/$name.status")" != 124 ] || { cat "$work/$name.err"; fail "$name: still waiting after 120 s"; }
}
waited() { grep -c '^redist: waited' "$work/$1.err"; }
show() { cat "$work/$1.out" "$work/$1.err"; }

# A late rank: each other rank says once where it waits and what the call was given, then the call completes with
# the right result.
run late late_rank REDIST_TIMEOUT=1
[ "$(cat "$work/late.status")" = 0 ] || { show late; fail "late: exit status $(cat "$work/late.status")"; }
# (At least: on a loaded machine a rank descheduled for a second can make a peer report a later wait too.)
for ((r = 0; r < ranks - 1; ++r)); do
  grep -q '^redist: waited [0-9]* s (REDIST_TIMEOUT=1) in PDGEMM (the processes.* arguments compared) \[transa=N transb=N m=24 n=24 k=24; A(1,1) of 24x24 in 4x4 blocks from process (0,0), context [0-9]*; B(1,1) of 24x24 in 4x4 blocks from process (0,0), context [0-9]*; C(1,1) of 24x24 in 4x4 blocks from process (0,0), context [0-9]*\] on a communicator of '"$ranks"' processes, as its rank [0-9]* (rank '"$r"' of MPI_COMM_WORLD): .*; still waiting' \
    "$work/late.err" || { show late; fail "late: rank $r did not say where it waits"; }
done

# A late rank after the agreement (a neighbor exchange's messages): the others say so once, then it completes.
run exchange late_exchange REDIST_TIMEOUT=1
[ "$(cat "$work/exchange.status")" = 0 ] || { show exchange; fail "exchange: exit status $(cat "$work/exchange.status")"; }
grep -q '^redist: waited [0-9]* s (REDIST_TIMEOUT=1) in neighbor_plan (waiting for the exchange) \[strategy standard; this process sends 1 messages of 8 bytes and receives 1 of 8\] .*(rank 0 of MPI_COMM_WORLD).*; still waiting' \
  "$work/exchange.err" || { show exchange; fail "exchange: rank 0 did not say where it waits"; }

# The plan's own timeout (exchange_options::timeout_seconds = 1) in place of the process's (here 0: never).
run plan plan_timeout REDIST_TIMEOUT=0
[ "$(cat "$work/plan.status")" = 0 ] || { show plan; fail "plan: exit status $(cat "$work/plan.status")"; }
grep -q "^redist: waited [0-9]* s (the plan's timeout_seconds=1, in place of REDIST_TIMEOUT) in neighbor_plan (waiting for the exchange) .*(rank 0 of MPI_COMM_WORLD).*; still waiting" \
  "$work/plan.err" || { show plan; fail "plan: rank 0 did not say where it waits, with the plan's timeout"; }

# A rank that skips the call: the watchdog ends the job, from the environment and from set_timeout.
for how in environment set_timeout; do
  if [ "$how" = environment ]; then
    run skipped skipped_call REDIST_TIMEOUT=1 REDIST_TIMEOUT_ACTION=abort
  else
    run skipped set_timeout
  fi
  status=$(cat "$work/skipped.status")
  [ "$status" != 0 ] && [ "$status" != 2 ] || { show skipped; fail "skipped ($how): exit status $status, expected an abort"; }
  grep -q '^redist: waited [0-9]* s (REDIST_TIMEOUT=1) in PDGEMM .*ending the job (REDIST_TIMEOUT_ACTION=abort)' \
    "$work/skipped.err" || { show skipped; fail "skipped ($how): no report before the abort"; }
done

# A rank on another communicator (the C exchange's init, rank 0 passing MPI_COMM_WORLD instead of the graph):
# every rank waits in an agreement the others are not in; the watchdog names the C function and ends the job.
run other other_communicator REDIST_TIMEOUT=1 REDIST_TIMEOUT_ACTION=abort
status=$(cat "$work/other.status")
[ "$status" != 0 ] && [ "$status" != 2 ] || { show other; fail "other communicator: exit status $status, expected an abort"; }
grep -q '^redist: waited [0-9]* s (REDIST_TIMEOUT=1) in redist_neighbor_alltoallv_init (the agreement .*ending the job (REDIST_TIMEOUT_ACTION=abort)' \
  "$work/other.err" || { show other; fail "other communicator: no report naming redist_neighbor_alltoallv_init before the abort"; }
# What each passed, side by side: rank 0 a communicator without the others' graph (whichever ranks reported
# before the abort).
! grep '^redist: waited' "$work/other.err" | grep -v '(rank 0 of MPI_COMM_WORLD)' | grep -v -q '\[a communicator with a distributed graph: 1 sources, 1 destinations here\]' \
  || { show other; fail "other communicator: a rank with the ring did not say so"; }
! grep '^redist: waited' "$work/other.err" | grep '(rank 0 of MPI_COMM_WORLD)' | grep -v -q '\[a communicator without a distributed graph\]' \
  || { show other; fail "other communicator: rank 0 did not say it passed a communicator without a graph"; }

# A rank that skips a plan's execution: the others wait in its agreement on the plan's private duplicate, where the
# roll call names the rank that is not there, and no other; the watchdog ends the job.
run execute skipped_execute REDIST_TIMEOUT=1 REDIST_TIMEOUT_ACTION=abort
status=$(cat "$work/execute.status")
[ "$status" != 0 ] && [ "$status" != 2 ] || { show execute; fail "skipped execution: exit status $status, expected an abort"; }
absent=$((ranks - 1))
grep -q "^redist: waited [0-9]* s (REDIST_TIMEOUT=1) in transform_plan (.*) \[1 job: double A 24x24 in 6x6 blocks on a ${ranks}x1 grid from B 24x24 in 8x8 blocks on a 1x${ranks} grid\] on a communicator of $ranks processes, as its rank [0-9]* (rank [0-9]* of MPI_COMM_WORLD): a roll call of 1 s found its rank $absent (rank $absent of MPI_COMM_WORLD) not waiting in redist on it (the call skipped.*ending the job (REDIST_TIMEOUT_ACTION=abort)" \
  "$work/execute.err" || { show execute; fail "skipped execution: no report naming rank $absent before the abort"; }
! grep "^redist: waited" "$work/execute.err" | grep -q "its rank [0-9]* (rank [0-9]* of MPI_COMM_WORLD), its rank" \
  || { show execute; fail "skipped execution: the roll call named a rank that waits"; }
# MPI's blocking collective (the alltoallv strategy without the execution's agreement): the others wait in the
# watched barrier before it, where the roll call names the absent rank. A one-sided multiply without the
# transforms' agreement: the others wait in its execution (the transform in's messages) and are reported.
run alltoallv skipped_alltoallv REDIST_TIMEOUT=1 REDIST_TIMEOUT_ACTION=abort
status=$(cat "$work/alltoallv.status")
[ "$status" != 0 ] && [ "$status" != 2 ] || { show alltoallv; fail "skipped alltoallv: exit status $status, expected an abort"; }
grep -q "^redist: waited [0-9]* s (REDIST_TIMEOUT=1) in transform_plan (.*found its rank $absent (rank $absent of MPI_COMM_WORLD) not waiting in redist on it (the call skipped.*ending the job (REDIST_TIMEOUT_ACTION=abort)" \
  "$work/alltoallv.err" || { show alltoallv; fail "skipped alltoallv: no report naming rank $absent before the abort"; }
run one_sided skipped_one_sided REDIST_TIMEOUT=1 REDIST_TIMEOUT_ACTION=abort
status=$(cat "$work/one_sided.status")
[ "$status" != 0 ] && [ "$status" != 2 ] || { show one_sided; fail "skipped one_sided: exit status $status, expected an abort"; }
grep -q "^redist: waited [0-9]* s (REDIST_TIMEOUT=1) in gemm_plan (execution) .*ending the job (REDIST_TIMEOUT_ACTION=abort)" \
  "$work/one_sided.err" || { show one_sided; fail "skipped one_sided: no report before the abort"; }
# REDIST_TIMEOUT=0: never reported. A value that is no number: said, and the default (300 s) kept.
run never late_rank REDIST_TIMEOUT=0
[ "$(cat "$work/never.status")" = 0 ] && [ "$(waited never)" = 0 ] || { show never; fail "never: reported or failed"; }
run unusable late_rank REDIST_TIMEOUT=soon
[ "$(cat "$work/unusable.status")" = 0 ] && [ "$(waited unusable)" = 0 ] || { show unusable; fail "unusable: reported or failed"; }
grep -q "^redist: REDIST_TIMEOUT='soon' is not a number of seconds" "$work/unusable.err" \
  || { show unusable; fail "unusable: the value was not refused"; }
echo "check_watchdog: $ranks ranks: late rank reported and completed (agreement, exchange, a plan's own timeout), skipped call and another communicator aborted (environment, set_timeout), a skipped execution's absent rank named (agreement, before MPI_Alltoallv), a skipped one-sided multiply reported, 0 and unusable values"
