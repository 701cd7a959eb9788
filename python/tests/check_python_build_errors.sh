#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python build stops with what to do where the environment cannot work (docs/python.md's table): no mpi4py
# (through pip, as a user meets it), mpi4py without an MPI library, no compiler wrapper for mpi4py's MPI, and an
# MPICC that links another library (python/find_mpi.py, which the build runs, with the environment varied).
#
# usage: check_python_build_errors.sh SCRATCH WHEEL_VENV SITE_VENV
#   SCRATCH: wiped, then holds a venv without mpi4py
#   WHEEL_VENV: a venv with the mpich wheel and mpi4py; SITE_VENV: one with mpi4py built against Debian's MPICH
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch=$(realpath -m "$1") venv=$(realpath "$2") site_venv=$(realpath "$3")
rm -rf "$scratch"
expect() {  # what, output, needles...
  local what=$1 output flat
  output=$2 flat=$(tr '\n' ' ' <<< "$2" | tr -s ' ')  # CMake folds its messages
  shift 2
  for needle in "$@"; do
    grep -qF -- "$needle" <<< "$flat" || { echo "FAILED ($what): no '$needle' in:" >&2; echo "$output" >&2; exit 1; }
  done
  printf '   %s: %s...\n' "$what" "$(grep -o 'ERROR=.*\|mpi4py is not installed.*' <<< "$flat" | head -n 1 | cut -c1-140)"
}

echo "== the Python build's errors for environments that cannot work"

/usr/bin/env python3 -m venv "$scratch"
out=$(cd "$scratch" && "$scratch/bin/python" -m pip install --no-deps "$OLDPWD" 2>&1) \
  && { echo "FAILED: pip install succeeded without mpi4py" >&2; exit 1; }
expect "no mpi4py (pip install .)" "$out" "mpi4py is not installed for" "python -m pip install mpich mpi4py"

out=$(MPI4PY_LIBMPI=/nonexistent/libmpi.so.12 "$venv/bin/python" python/find_mpi.py) && exit 1
expect "no MPI library" "$out" "found no MPI library" "python -m pip install mpich"

out=$(env -u MPICC PATH=/nonexistent "$site_venv/bin/python" python/find_mpi.py) && exit 1
expect "no wrapper for mpi4py's MPI" "$out" "no compiler wrapper linking it was found" "set MPICC"

out=$(MPICC=/bin/true "$venv/bin/python" python/find_mpi.py) && exit 1
expect "MPICC of another MPI" "$out" "MPICC=/bin/true links" "unset MPICC"
