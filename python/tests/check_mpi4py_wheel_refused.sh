#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An mpi4py from PyPI's binary wheels (built for another MPI, or looking for another MPI's library name) next to
# redist must make `import redist` raise an ImportError that names redist's MPI library and the command that
# fixes it, never crash or fail with an unrelated missing-library error.
#
# usage: check_mpi4py_wheel_refused.sh REDIST_VENV SCRATCH_VENV
#   REDIST_VENV: a venv where the README's Python commands installed redist (its redist package is reused)
#   SCRATCH_VENV: created (wiped first) with pip's binary mpi4py wheel and numpy
# Prints "SKIPPED: <reason>" and exits 0 only when the package index cannot be reached.
set -euo pipefail
redist_venv=$(realpath "$1") scratch=$(realpath -m "$2")
rm -rf "$scratch"
/usr/bin/python3 -m venv "$scratch"
if ! "$scratch/bin/python" -m pip install -q --only-binary=mpi4py mpi4py numpy > "$scratch.pip.log" 2>&1; then
  if grep -qiE "network|connection|resolve|could not find a version|no matching distribution" "$scratch.pip.log"; then
    echo "SKIPPED: PyPI cannot be reached for mpi4py's binary wheel ($(tail -n 1 "$scratch.pip.log"))"
    exit 0
  fi
  cat "$scratch.pip.log"
  exit 1
fi
package=$("$redist_venv/bin/python" -c "import os, redist; print(os.path.dirname(redist.__file__))")
mkdir -p "$scratch/redist-only"
cp -r "$package" "$scratch/redist-only/"
# Open MPI (which the wheel picks when it is installed) refuses root without these.
set +e
output=$(cd "$scratch" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONPATH="$scratch/redist-only" \
         timeout 120 "$scratch/bin/python" -c "import redist" 2>&1)
status=$?
set -e
echo "$output" | tail -n 1 | fold -w 118 | sed 's/^/   /'
expected_library=$("$redist_venv/bin/python" -c "from redist import _mpi_build; print(_mpi_build.MPI_LIBRARY)")
if [ $status -eq 0 ]; then
  echo "FAILED: import redist succeeded beside mpi4py's binary wheel" >&2
  exit 1
fi
for needle in "ImportError" "$expected_library" "--no-binary=mpi4py mpi4py"; do
  if ! grep -qF -- "$needle" <<< "$output"; then
    echo "FAILED: the error does not say '$needle':" >&2
    echo "$output" >&2
    exit 1
  fi
done
echo "import redist beside mpi4py's binary wheel: ImportError naming $expected_library and the fix"
