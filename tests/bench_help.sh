#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks that benchmark programs answer --help: exit status 0 and a line starting "usage: " on standard output.
#
#   bench_help.sh MPIEXEC NUMPROC_FLAG [PROGRAM | --plain]...
#
# PROGRAMs run on one MPI rank (MPIEXEC NUMPROC_FLAG 1 PROGRAM --help); those after --plain, programs without MPI,
# run directly. Every program is tried (one summary of all failures); exit status 1 when any failed.
set -u
if [ $# -lt 2 ]; then
  echo "usage: bench_help.sh MPIEXEC NUMPROC_FLAG [PROGRAM | --plain]..." >&2
  exit 2
fi
mpiexec=$1
numproc_flag=$2
shift 2
launcher=("$mpiexec" "$numproc_flag" 1)
checked=0
failed=()
for arg in "$@"; do
  if [ "$arg" = "--plain" ]; then
    launcher=()
    continue
  fi
  # ${a[@]+"${a[@]}"}: an empty launcher under set -u (bash before 4.4 calls an empty array unbound).
  stdout=$(${launcher[@]+"${launcher[@]}"} "$arg" --help)
  status=$?
  checked=$((checked + 1))
  name=$(basename "$arg")
  if [ "$status" -ne 0 ]; then
    echo "FAIL $name --help: exit status $status"
    failed+=("$name")
  elif ! grep -q '^usage: ' <<<"$stdout"; then
    echo "FAIL $name --help: no line starting \"usage: \" on stdout:"
    echo "$stdout"
    failed+=("$name")
  else
    echo "ok   $name --help: $(grep -m1 '^usage: ' <<<"$stdout" | cut -c1-100)"
  fi
done
if [ "$checked" -eq 0 ]; then
  echo "FAIL: no program given"
  exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench_help: ${#failed[@]} of $checked programs failed: ${failed[*]}"
  exit 1
fi
echo "bench_help: all $checked programs print their usage and exit 0"
