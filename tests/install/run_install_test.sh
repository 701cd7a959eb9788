#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The install test: the README's "Using it" blocks, run as written against an installed redist, for every
# audience. Each block is taken from README.md (the sh block after "<!-- install-test: NAME -->"), with
# /opt/redist replaced by a scratch prefix; the programs are the test's own (tests/install/consumer/main.cpp as
# app.cpp, consumer_c/main.c as app.c, tests/fortran/dropin_program.f90 compiled to app.o) and run at every
# rank count given (the blocks say -n 4).
#
# usage: run_install_test.sh shared|static|one-mpi BUILD_DIR SOURCE_ROOT WORK_DIR RANKS...
#   shared: BUILD_DIR is the configured and built tree (shared libraries); installs it with the README's
#           line and runs the CMake (C++ and C-only), pkg-config (C and C++) and ScaLAPACK (relink and
#           LD_PRELOAD) blocks.
#   static: configures and builds the library alone with -DBUILD_SHARED_LIBS=OFF in WORK_DIR, installs it, and
#           runs the pkg-config block with --static (the binary must not need libredist.so).
#   one-mpi: every program and shared library under BUILD_DIR loads at most one MPI library (ldd).
# Environment: MPI (mpich or openmpi; default mpich): the README's commands name MPICH's wrappers, which are
# swapped for the selected MPI's. Every step echoes what it runs; the first failure ends the test (exit 1).
set -euo pipefail

mode=$1 build=$2 root=$3 work=$4
shift 4
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(2 4)
mpi=${MPI:-mpich}
readme="$root/README.md"
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

fail() {
  echo "install test FAILED: $*" >&2
  exit 1
}

# The README's block NAME, for this prefix and MPI.
block() {
  local text
  text=$(awk -v marker="<!-- install-test: $1 -->" '
    $0 == marker { found = 1; next }
    found == 1 && /^```sh$/ { inside = 1; found = 2; next }
    inside && /^```$/ { exit }
    inside { print }' "$readme")
  [ -n "$text" ] || fail "README.md has no block <!-- install-test: $1 -->"
  text=${text//\/opt\/redist/$prefix}
  if [ "$mpi" = openmpi ]; then
    text=$(printf '%s\n' "$text" | sed -e 's/\.mpich/.openmpi/g' -e 's/-env LD_PRELOAD /-x LD_PRELOAD=/g' \
                                       -e 's/mpiexec\.openmpi -n/mpiexec.openmpi --oversubscribe -n/g')
  fi
  printf '%s\n' "$text"
}

# Runs a block's lines in DIR: everything at the first rank count, then its mpiexec lines at the others.
run_block() {  # name dir [sed expression applied to the block]
  local name=$1 dir=$2 edit=${3:-}
  local text
  text=$(block "$name")
  [ -z "$edit" ] || text=$(printf '%s\n' "$text" | sed -e "$edit")
  local first=1
  for n in "${ranks[@]}"; do
    local script
    if [ $first = 1 ]; then script=$text; else script=$(printf '%s\n' "$text" | grep -E '^(export|mpiexec)'); fi
    script=${script//-n 4/-n $n}
    echo "== [$name, $n ranks] in $dir:"
    printf '%s\n' "$script" | sed 's/^/   $ /'
    (cd "$dir" && bash -euo pipefail -c "$script") > "$dir/$name.np$n.log" 2>&1 ||
      { cat "$dir/$name.np$n.log"; fail "block '$name' at $n ranks (log: $dir/$name.np$n.log)"; }
    tail -n 3 "$dir/$name.np$n.log" | sed 's/^/   /'
    first=0
  done
}

# At most one MPI library among what FILE loads (ldd): two in one process crash or hang.
one_mpi() {
  local abis
  abis=$(ldd "$1" | awk '{print $1}' | { grep -E '^lib(mpi|mpich)\.so\.[0-9]+' || true; } | sed -E 's/^libmpich/libmpi/' | sort -u)
  [ "$(printf '%s' "$abis" | grep -c .)" -le 1 ] || fail "$1 loads two MPI libraries: $(echo $abis)"
}

# The block's link line resolves every MPI library it names in that MPI's own files, never through a link that
# Debian's `mpi` alternatives set (/usr/lib/<triplet>/libmpi.so -> /etc/alternatives/...: Open MPI's or MPICH's,
# as they point): so the README's lines build the same program whichever way the alternatives point (the Open MPI
# wrappers' generic -lmpi made a program that loaded both MPIs where they pointed at MPICH). The linker's --trace
# names each library it took.
links_own_mpi() {  # name dir [sed expression applied to the block]
  local name=$1 dir=$2 edit=${3:-} text trace path
  text=$(block "$name" | grep -v '^mpiexec')
  [ -z "$edit" ] || text=$(printf '%s\n' "$text" | sed -e "$edit")
  text=$(printf '%s\n' "$text" | sed -E 's/^(mpi(cc|cxx|fort)\.[a-z]+ .*)$/\1 -Wl,--trace/')
  trace=$(cd "$dir" && bash -euo pipefail -c "$text" 2>&1) || { echo "$trace"; fail "block '$name' with --trace"; }
  local taken=0
  while read -r path; do
    taken=$((taken + 1))
    case "$(readlink "$path" || true)" in
      /etc/alternatives/*) fail "block '$name': the link took $path, which Debian's alternatives point at one MPI or the other ($(readlink -f "$path"))" ;;
    esac
    case "$path" in
      "$other_alternatives"/*) fail "block '$name': with the alternatives pointed at MPICH the link took $path ($(readlink -f "$path"))" ;;
    esac
  done < <(grep -E '/lib(mpi|mpich)(_cxx)?\.so$' <<< "$trace")
  [ $taken -gt 0 ] || { echo "$trace"; fail "block '$name': --trace named no MPI library"; }
  echo "== [$name] every MPI library of the link in the MPI's own files ($taken taken, none through the alternatives${REDIST_OTHER_ALTERNATIVES:+, alternatives pointed at MPICH})"
}

# Debian's `mpi-<triplet>` alternatives pointed at MPICH while the program is built with Open MPI's wrappers, without
# root and without touching the system. The alternatives set /usr/lib/<triplet>/libmpi.so and its companions,
# which the linker finds after every -L of the command line; Open MPI's mpifort names -lmpi with no -L to Open MPI's
# own library directory, so it took MPICH's library there. Here the same links are in a folder of this test, named
# by -L after the wrapper's own directories (OMPI_LDFLAGS, set by a stand-in for each wrapper first on PATH): where
# the system's directory is. (MPICH's wrappers name libmpich, which the alternatives do not set: nothing to do.)
other_alternatives="$work/alternatives-pointed-at-mpich"
if [ "$mpi" = openmpi ]; then
  mkdir -p "$other_alternatives/lib" "$other_alternatives/bin"
  triplet_lib=/usr/lib/$(gcc -print-multiarch)
  for pair in libmpi.so:libmpich.so libmpi++.so:libmpichcxx.so libmpicxx.so:libmpichcxx.so libmpif77.so:libmpichfort.so \
              libmpif90.so:libmpichfort.so libmpifort.so:libmpichfort.so; do
    if [ -e "$triplet_lib/${pair#*:}" ]; then ln -sf "$triplet_lib/${pair#*:}" "$other_alternatives/lib/${pair%%:*}"; fi
  done
  for wrapper in mpicc mpicxx mpifort; do
    real=$(command -v "$wrapper.openmpi" || true)
    [ -n "$real" ] || continue
    printf '#!/bin/sh\nflags=""\nfor d in $(%s -showme:libdirs); do flags="$flags -L$d"; done\nOMPI_LDFLAGS="$flags -L%s" exec %s "$@"\n' \
      "$real" "$other_alternatives/lib" "$real" > "$other_alternatives/bin/$wrapper.openmpi"
    chmod +x "$other_alternatives/bin/$wrapper.openmpi"
  done
fi
# Runs a command (run_block, links_own_mpi, one_mpi, bound_to_dropin) as on a machine whose alternatives point at
# MPICH.
with_other_alternatives() {
  if [ "$mpi" != openmpi ]; then
    echo "== [$1 $2] alternatives pointed at the other MPI: not applicable (MPICH's wrappers name libmpich)"
    return
  fi
  if [ -z "$(ls -A "$other_alternatives/lib")" ]; then
    echo "== [$1 $2] alternatives pointed at MPICH: SKIPPED (MPICH's development files are not installed)"
    return
  fi
  (export PATH="$other_alternatives/bin:$PATH" REDIST_OTHER_ALTERNATIVES=1; "$@") || exit 1
}

# A fresh directory holding the program a block builds.
program_dir() {  # name source target
  mkdir -p "$work/$1"
  cp "$2" "$work/$1/$3"
  echo "$work/$1"
}

if [ "$mode" = one-mpi ]; then
  # Every program and shared library built in BUILD_DIR loads at most one MPI library.
  count=0
  while IFS= read -r f; do
    one_mpi "$f"
    count=$((count + 1))
  done < <(find "$build" -path '*/CMakeFiles' -prune -o -path '*/python-venv' -prune -o -path '*/install/*' -prune \
             -o -type f \( -name '*.so*' -o -perm -u+x \) -print | while IFS= read -r f; do
             [ "$(head -c 4 "$f" | tail -c 3)" = ELF ] && echo "$f"; done)
  [ $count -gt 0 ] || fail "no program or library found in $build"
  echo "one MPI library in each of $count programs and libraries under $build"
  exit 0
fi

if [ "$mode" = static ]; then
  echo "== static library: configure, build and install the library alone"
  cmake -S "$root" -B "$work/static-build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DREDIST_MPI="$mpi" \
    -DREDIST_BUILD_TESTS=OFF -DREDIST_BUILD_BENCH=OFF -DREDIST_BUILD_TOOLS=OFF -DREDIST_BUILD_EXAMPLES=OFF \
    > "$work/static-configure.log" 2>&1 || { cat "$work/static-configure.log"; fail "configure (static)"; }
  cmake --build "$work/static-build" -j 2 --target redist redist_scalapack > "$work/static-build.log" 2>&1 ||
    { tail -n 50 "$work/static-build.log"; fail "build (static)"; }
  cmake --install "$work/static-build" --prefix "$prefix" > "$work/static-install.log" 2>&1 ||
    { cat "$work/static-install.log"; fail "install (static)"; }
  [ -f "$prefix/lib/libredist.a" ] || fail "no $prefix/lib/libredist.a"
  dir=$(program_dir c-static "$root/tests/install/consumer_c/main.c" app.c)
  run_block pkg-config "$dir" 's/\$(pkg-config --libs redist)/$(pkg-config --static --libs redist)/'
  ! ldd "$dir/app" | grep -q libredist || fail "the --static build of app still loads libredist.so"
  one_mpi "$dir/app"
  echo "install test (static) passed"
  exit 0
fi

# ---- shared: install with the README's line -----------------------------------------------------------------
install_line=$(block build | grep -E '^cmake --install build ')
[ -n "$install_line" ] || fail "the README's build block has no 'cmake --install build ...' line"
echo "== install: $install_line (in $(dirname "$build"), build = $(basename "$build"))"
(cd "$(dirname "$build")" && bash -euo pipefail -c "${install_line/--install build /--install $(basename "$build") }") \
  > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "install"; }

lib="$prefix/lib"
soname=$(readelf -d "$lib/libredist.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
version=$(sed -n 's/^#define REDIST_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/redist/version.hpp")
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
expected_soname="libredist.so.$major"
[ "$major" = 0 ] && expected_soname="libredist.so.0.$minor"
[ "$soname" = "$expected_soname" ] || fail "libredist.so has SONAME '$soname', expected $expected_soname"
for so in libredist.so libredist_scalapack.so; do
  runpath=$(readelf -d "$lib/$so" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  [ "$runpath" = '$ORIGIN' ] || fail "$so has RUNPATH '$runpath', expected \$ORIGIN"
  one_mpi "$lib/$so"
done
readelf -d "$lib/libredist_scalapack.so" | grep -q "NEEDED.*\[$soname\]" ||
  fail "libredist_scalapack.so does not link the shared libredist ($soname)"
# The drop-in exports ScaLAPACK's names only, and MPI_Finalize (the trace summary, docs/trace.md; tests/install:
# src/scalapack_dropin/exports.map).
extra=$(nm -D --defined-only "$lib/libredist_scalapack.so" | awk '{print $3}' |
  grep -vE '^(Cp[isdcz](gemr2d|trmr2d)|p[isdcz](gemr2d|trmr2d)_{0,2}|P[ISDCZ](GEMR2D|TRMR2D)|p[sd]tran_{0,2}|P[SD]TRAN|p[cz]tran[cu]_{0,2}|P[CZ]TRAN[CU]|p[sdcz]gemm_{0,2}|P[SDCZ]GEMM|MPI_Finalize)$' || true)
[ -z "$extra" ] || fail "libredist_scalapack.so exports more than ScaLAPACK's names and MPI_Finalize: $(echo $extra | head -c 300)"
pc_version=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --modversion redist)
[ "$pc_version" = "$version" ] || fail "pkg-config --modversion redist says $pc_version, redist/version.hpp $version"
echo "   SONAME $soname, RUNPATH \$ORIGIN, one MPI, drop-in exports ScaLAPACK's names only, version $version"

# ---- C++ and C with CMake -----------------------------------------------------------------------------------
dir=$(program_dir cmake-cxx "$root/tests/install/consumer/main.cpp" app.cpp)
run_block cmake "$dir"
one_mpi "$dir/build/app"
dir=$(program_dir cmake-c "$root/tests/install/consumer_c/main.c" app.c)
run_block cmake "$dir" 's/LANGUAGES CXX/LANGUAGES C/; s/app\.cpp/app.c/'
one_mpi "$dir/build/app"

# ---- C and C++ with pkg-config ------------------------------------------------------------------------------
dir=$(program_dir pkg-config-c "$root/tests/install/consumer_c/main.c" app.c)
run_block pkg-config "$dir"
one_mpi "$dir/app"
links_own_mpi pkg-config "$dir"
with_other_alternatives run_block pkg-config "$dir"
with_other_alternatives one_mpi "$dir/app"
with_other_alternatives links_own_mpi pkg-config "$dir"
dir=$(program_dir pkg-config-cxx "$root/tests/install/consumer/main.cpp" app.cpp)
cxx_edit='s/mpicc\.\([a-z]*\)/mpicxx.\1/; s/app\.c /app.cpp /'
run_block pkg-config "$dir" "$cxx_edit"
one_mpi "$dir/app"
links_own_mpi pkg-config "$dir" "$cxx_edit"
with_other_alternatives run_block pkg-config "$dir" "$cxx_edit"
with_other_alternatives one_mpi "$dir/app"
with_other_alternatives links_own_mpi pkg-config "$dir" "$cxx_edit"

# ---- a ScaLAPACK program: relinked with the drop-in, and as built under LD_PRELOAD -------------------------
fortran=$(block scalapack-relink | grep -oE '^mpifort\.[a-z]+')
dir="$work/scalapack-relink"
mkdir -p "$dir"
(cd "$dir" && "$fortran" -c "$root/tests/fortran/dropin_program.f90" -o app.o) || fail "compiling the Fortran program"
run_block scalapack-relink "$dir"
one_mpi "$dir/app"
links_own_mpi scalapack-relink "$dir"
# The program's ScaLAPACK calls must reach the drop-in, not ScaLAPACK (the loader's bindings say which).
bound_to_dropin() {  # dir program [env...]
  local d=$1 p=$2
  shift 2
  (cd "$d" && env "$@" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$d/bindings" "./$p" > /dev/null 2>&1 || true)
  for symbol in pdgemr2d_ pdtrmr2d_ pdtran_ pdgemm_; do
    grep -hF "normal symbol \`$symbol'" "$d"/bindings.* 2>/dev/null | grep -q libredist_scalapack ||
      fail "$p's $symbol is not bound to libredist_scalapack (LD_DEBUG=bindings output in $d)"
  done
  rm -f "$d"/bindings.*
}
bound_to_dropin "$dir" app
with_other_alternatives run_block scalapack-relink "$dir"
with_other_alternatives one_mpi "$dir/app"
with_other_alternatives links_own_mpi scalapack-relink "$dir"
with_other_alternatives bound_to_dropin "$dir" app

dir="$work/scalapack-preload"
mkdir -p "$dir"
cp "$work/scalapack-relink/app.o" "$dir/"
# The program as its author built it: ScaLAPACK, LAPACK and BLAS only (what redist-scalapack.pc adds after
# the drop-in), no redist.
scalapack_libs=$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --libs redist-scalapack | tr ' ' '\n' | grep '^/' | tr '\n' ' ')
(cd "$dir" && "$fortran" app.o -o app $scalapack_libs) || fail "linking the Fortran program with ScaLAPACK alone"
! ldd "$dir/app" | grep -q redist || fail "the program as built already loads redist"
run_block scalapack-preload "$dir"
bound_to_dropin "$dir" app "LD_PRELOAD=$lib/libredist_scalapack.so"

# The drop-in in a program built with the other MPI stops at load time, naming both libraries.
other=openmpi
[ "$mpi" = openmpi ] && other=mpich
other_scalapack=$(printf '%s\n' $scalapack_libs | grep "libscalapack-$mpi" | sed "s/libscalapack-$mpi/libscalapack-$other/")
if command -v "mpifort.$other" > /dev/null && [ -f "$other_scalapack" ]; then
  dir="$work/scalapack-other-mpi"
  mkdir -p "$dir"
  (cd "$dir" && "mpifort.$other" -c "$root/tests/fortran/dropin_program.f90" -o app.o &&
     "mpifort.$other" app.o -o app $(printf '%s\n' $scalapack_libs | sed "s/libscalapack-$mpi/libscalapack-$other/")) ||
    fail "building the Fortran program with $other"
  set +e
  refused=$(cd "$dir" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            LD_PRELOAD="$lib/libredist_scalapack.so" timeout 60 ./app 2>&1)
  status=$?
  set -e
  [ $status -ne 0 ] && grep -q "this process loads two MPI libraries" <<< "$refused" ||
    fail "the $mpi drop-in preloaded into a $other program did not refuse (exit $status): $refused"
  echo "== the $mpi drop-in preloaded into a $other program refuses: $(head -n 1 <<< "$refused" | cut -c 1-150)..."
else
  echo "== SKIPPED: the drop-in beside another MPI (no mpifort.$other or $other_scalapack)"
fi

echo "install test (shared) passed"
