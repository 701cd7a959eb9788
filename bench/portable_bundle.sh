#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Packs benchmark programs, the library they load, MPICH's launcher and the peers given on the command line
# into one tarball whose programs run on another x86-64 Linux machine that has no MPI, ScaLAPACK or BLAS
# installed (a lent compute node, a container): every shared library they load travels, except the C
# library's own, so the target needs a glibc at least as new as the build machine's.
#
#   bench/portable_bundle.sh BUILD_DIR OUT.tar.xz [PEER_LIBRARY...]
#
# Unpacked (tar -xJf OUT.tar.xz -C DIR), DIR/env.sh sets PATH and LD_LIBRARY_PATH (which takes precedence
# over the programs' RUNPATH); the peers lie in DIR/peers under their own names.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR OUT.tar.xz [PEER_LIBRARY...]" >&2
  exit 2
fi
build=$1
out=$2
shift 2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/peers"

programs=("$build"/bench/bench_scalapack_sweep "$build"/bench/bench_transform_bench "$build"/bench/bench_gemm_bench
  "$build"/bench/bench_reshape_bench "$(command -v mpiexec.hydra)" "$(command -v hydra_pmi_proxy)")
for p in "${programs[@]}"; do cp -L "$p" "$stage/bin/"; done
ln -s mpiexec.hydra "$stage/bin/mpiexec.mpich"
for peer in "$@"; do cp -L "$peer" "$stage/peers/"; done

# Every library the programs and peers load, under the name the loader asks for (its SONAME); the C
# library's own parts stay behind because they must match the target's loader.
for f in "${programs[@]}" "$@"; do
  ldd "$f" | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
  libc.so.* | libm.so.* | libdl.so.* | librt.so.* | libpthread.so.* | libresolv.so.* | ld-linux*) continue ;;
  esac
  cp -L "$path" "$stage/lib/$name"
  # Debug sections are most of MPICH's size; the programs never need them.
  strip --strip-debug "$stage/lib/$name" 2>/dev/null || true
done

# UCX (MPICH's network layer here) loads its shared-memory copy transport as a module; without it MPICH 4.0
# finishes the programs' work but can hang in MPI_Finalize on a machine with no UCX installed.
ucx_modules=$(dirname "$(ldconfig -p | awk '/libucp.so.0 /{print $NF; exit}')")/ucx
if [ -e "$ucx_modules/libuct_cma.so.0" ]; then
  mkdir -p "$stage/lib/ucx"
  cp -L "$ucx_modules/libuct_cma.so.0" "$stage/lib/ucx/"
  ln -s libuct_cma.so.0 "$stage/lib/ucx/libuct_cma.so"
fi

cat >"$stage/env.sh" <<'EOF'
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$here/bin:$PATH"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -d "$here/lib/ucx" ]; then export UCX_MODULE_DIR="$here/lib/ucx"; fi
EOF
tar -cJf "$out" -C "$stage" .
echo "$out: $(du -h "$out" | cut -f1), $(ls "$stage/lib" | wc -l) libraries"
