#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# redist on a simulated cluster (SimGrid's SMPI): one JSON line per measured variant.
#   bash bench/smpi/run.sh transform|neighbor|inplace|reshape|gemm PLATFORM RANKS N
# transform: a block-cyclic pdtran-like redistribution of an N x N matrix; neighbor: a 27-point halo exchange of
# N^3 subdomains; inplace: a variable all-to-all of N/2 .. 2N doubles per pair in one buffer; reshape: a 3-D FFT's
# reshape of N^3 complex doubles; gemm: C = A B, N x N block-cyclic (docs/smpi.md). PLATFORM: fattree, torus or
# dragonfly (bench/smpi/platform_xml.py says what each is); one rank per simulated host;
# network time only (the ranks' computation costs no simulated time). Installs SimGrid (apt-get) when smpirun is
# missing and builds what it needs in build/smpi (REDIST_SMPI_BUILD overrides).
# Environment:
#   VARIANTS   the variants to run, space-separated (default: every one that applies, below): redist:<strategy>,
#              mpi:alltoallv:<selector> (mpich, ompi, mvapich2, impi: that MPI's choice of algorithm as SMPI
#              re-implements it) or mpi:alltoallv:<algorithm> (SMPI's name: bruck, pair, ring, ompi_basic_linear...);
#              reshape also mpi:alltoallw, gemm mpi:summa:<selector> and scalapack:pdgemm (ScaLAPACK's own, where the
#              build has it: below), neighbor mpi:neighbor_alltoallv
#   SCALAPACK_SOURCE   gemm: a ScaLAPACK source tree whose BLACS and PBLAS are built with SMPI for scalapack:pdgemm;
#              when that variant is asked for without it, the build's own (if configured before) or v2.2.1 (Debian's
#              version) cloned from GitHub into the build
#   CASE       transform layouts: study (32x32 blocks -> A = B^T in 128x128 on the transposed grid, default) or
#              equal (128x128 on one grid: a permutation of blocks, the case torus_routed takes); reshape:
#              x_to_y_pencil (default) or brick_to_x_pencil
#   VERIFY     1: real buffers, every element checked; 0: SMPI's shared pages (timing only); default 1 for
#              N <= 8192 (transform), 65536 (inplace), 256 (reshape), 2048 (gemm), 64 (neighbor)
#   REGION     neighbor: ranks per region, the simulated node of several hosts that aggregate and dedup group by
#              (default 8)
#   COST_MODEL neighbor: what redist:auto prices its candidates with: calibrate (default: the library's calibration,
#              measured once per set of ranks and regions; it costs SimGrid more than an hour of wall time at 1024
#              ranks), platform (the platform's link rate inside and between regions: every rank is its own host)
#              or defaults (redist::cost_model's built-in figures, which assume regions share memory)
#   REPS       executions per plan, the best one reported (default 2)
#   TORUS      torus: its extents X,Y,Z, product RANKS (default: as equal as RANKS's factors allow, largest first);
#              16,8,1 is an asymmetric 2-D torus
#   TORUS_ROUTING, TORUS_BETA, TORUS_PHASES   redist:torus_routed's routing mode (sdr, direct, automatic; default
#              sdr), chunks per routed message (default: the library's) and phase schedule (sequential, the default,
#              or concurrent: every phase of a non-square grid's transpose at once)
#   TORUS_HARDWARE   the network model redist:torus_routed's automatic mode simulates (simgrid_torus: SimGrid's own
#              routes; default: the library's)
#   SMPI_CFG   more smpirun options, space-separated, e.g. "--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1" (SMPI's
#              per-message latency and bandwidth factors, calibrated on a TCP cluster, set to 1: an ideal network)
#   WALL_LIMIT seconds of wall time per variant (default: none); a variant stopped there prints
#              "simulated_seconds": null and a note
# A variant's JSON has "verified": true only when its result was checked; a wrong result exits non-zero.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { echo "usage: bash bench/smpi/run.sh transform|neighbor|inplace|reshape|gemm fattree|torus|dragonfly RANKS N" >&2; exit 2; }
[ $# -eq 4 ] || usage
benchmark=$1 platform=$2 ranks=$3 n=$4
case $benchmark in transform|neighbor|inplace|reshape|gemm) ;; *) usage ;; esac
case $platform in fattree|torus|dragonfly) ;; *) usage ;; esac
[[ $ranks =~ ^[0-9]+$ && $n =~ ^[0-9]+$ ]] || usage

# What the SMPI build needs, installed where missing: SimGrid, a compiler and CMake, the BLAS libredist links.
missing=()
for p in build-essential cmake python3 libsimgrid-dev libopenblas-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
fi
build=${REDIST_SMPI_BUILD:-$root/build/smpi}
# ScaLAPACK's pdgemm (gemm's scalapack:pdgemm variant): its BLACS and PBLAS compiled into the SMPI module.
scalapack=()
if [ -n "${SCALAPACK_SOURCE:-}" ] || [[ " ${VARIANTS:-} " == *" scalapack:pdgemm "* ]]; then
  missing=()
  for p in gfortran git; do command -v "$p" > /dev/null || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
  fi
  configured=$(sed -n 's/^REDIST_SMPI_SCALAPACK_SOURCE:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  source_dir=${SCALAPACK_SOURCE:-${configured:-$build/scalapack-2.2.1}}  # given, else the build's, else a clone
  if [ ! -f "$source_dir/PBLAS/SRC/pdgemm_.c" ]; then
    [ -z "${SCALAPACK_SOURCE:-}" ] || { echo "SCALAPACK_SOURCE=$SCALAPACK_SOURCE: not a ScaLAPACK source tree (no PBLAS/SRC/pdgemm_.c)" >&2; exit 2; }
    mkdir -p "$build"
    git clone -q --depth 1 --branch v2.2.1 https://github.com/Reference-ScaLAPACK/scalapack "$source_dir"
  fi
  scalapack=(-DREDIST_SMPI_SCALAPACK_SOURCE="$(cd "$source_dir" && pwd)")
fi
if [ ! -f "$build/CMakeCache.txt" ] || [ ${#scalapack[@]} -gt 0 ]; then
  cmake -S "$root/bench/smpi" -B "$build" "${scalapack[@]}" > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; exit 1; }
fi
cmake --build "$build" -j "$(nproc)" > "$build.build.log" 2>&1 || { tail -40 "$build.build.log" >&2; exit 1; }

mkdir -p "$build/platforms"
xml=$build/platforms/$platform$ranks${TORUS:+-${TORUS//,/x}}.xml hosts=$build/platforms/hosts$ranks.txt
[ -z "${TORUS:-}" ] || [ "$platform" = torus ] || { echo "TORUS=$TORUS: only for the torus platform" >&2; exit 2; }
python3 "$root/bench/smpi/platform_xml.py" "$platform" "$ranks" ${TORUS:+"$TORUS"} > "$xml"
seq -f "node-%g" 0 $((ranks - 1)) > "$hosts"
bandwidth=12.5e9  # platform_xml.py's links: the link-rate bound's rate
torus=$(sed -n 's/.*topology="TORUS" topo_parameters="\([0-9,]*\)".*/\1/p' "$xml")

# Each benchmark's default case (smpi_bench's table says the same).
case $benchmark in transform) layout_case=study ;; neighbor) layout_case=halo27 ;; inplace) layout_case=variable ;;
                   reshape) layout_case=x_to_y_pencil ;; gemm) layout_case=square ;; esac
layout_case=${CASE:-$layout_case}
if [ -z "${VARIANTS:-}" ] && [ "$benchmark" = transform ]; then
  VARIANTS="redist:auto redist:point_to_point redist:alltoallv mpi:alltoallv:mpich mpi:alltoallv:ompi"
  VARIANTS="$VARIANTS mpi:alltoallv:ompi_basic_linear"
  [ "$platform" = torus ] && [ "$layout_case" = equal ] && VARIANTS="$VARIANTS redist:torus_routed"
elif [ -z "${VARIANTS:-}" ] && [ "$benchmark" = inplace ]; then
  VARIANTS="redist:auto redist:chunked redist:pairwise mpi:alltoallv:mpich mpi:alltoallv:ompi"
elif [ -z "${VARIANTS:-}" ] && [ "$benchmark" = reshape ]; then
  VARIANTS="redist:auto redist:point_to_point mpi:alltoallw mpi:alltoallv:mpich mpi:alltoallv:ompi"
elif [ -z "${VARIANTS:-}" ] && [ "$benchmark" = gemm ]; then
  VARIANTS="redist:auto redist:two_sided redist:one_sided mpi:summa:mpich mpi:summa:ompi"
  grep -q '^REDIST_SMPI_SCALAPACK_SOURCE:PATH=.' "$build/CMakeCache.txt" && VARIANTS="$VARIANTS scalapack:pdgemm"
elif [ -z "${VARIANTS:-}" ]; then
  VARIANTS="redist:auto redist:standard redist:aggregate redist:dedup mpi:neighbor_alltoallv"
fi
case $benchmark in transform) small=8192 ;; inplace) small=65536 ;; reshape) small=256 ;; gemm) small=2048 ;; *) small=64 ;; esac
verify=${VERIFY:-$([ "$n" -le $small ] && echo 1 || echo 0)}
status=0 results=()
for variant in $VARIANTS; do
  # redist's own collectives (plan agreement) use the mpich selector; an MPI baseline names its selector. SMPI's
  # default selector posts every message of a collective at once: minutes per collective at 256 ranks.
  selector=mpich extra=() algorithm=()
  if [[ $variant == mpi:*:* ]]; then
    name=${variant##*:} collective=${variant#mpi:}; collective=${collective%%:*}
    case $name in
      mpich|ompi|mvapich2|impi) selector=$name ;;        # a whole MPI's decision logic, as SMPI re-implements it
      *) algorithm=(--cfg=smpi/"$collective":"$name") ;;  # one of SMPI's algorithms by its name
    esac
  fi
  [ "$variant" = redist:torus_routed ] && extra=(--torus "$torus" --torus-routing "${TORUS_ROUTING:-sdr}"
                                                --torus-beta "${TORUS_BETA:-0}" --torus-phases "${TORUS_PHASES:-sequential}"
                                                ${TORUS_HARDWARE:+--torus-hardware "$TORUS_HARDWARE"})
  # smpi/test: SMPI charges 1e-4 s of simulated time per unsuccessful MPI_Test by default, growing; redist tests for
  # progress between its copies (its waits block under SMPI), which would be charged as network time. REDIST_TIMEOUT=0: the simulation's wall time is not the job's.
  # smpi/shared-malloc-blocksize: SMPI maps each shared buffer one block at a time; 64 MiB blocks keep gigabytes of
  # fake buffers under the kernel's limit of 65530 mappings per process (1 MiB blocks: 17 GB of reshape failed).
  # OPENBLAS_NUM_THREADS=1: every simulated rank runs on one OS thread (gemm's local products).
  out=$(REDIST_TIMEOUT=0 OPENBLAS_NUM_THREADS=1 timeout "${WALL_LIMIT:-0}" smpirun -np "$ranks" -platform "$xml" \
          -hostfile "$hosts" \
          --cfg=smpi/simulate-computation:no --cfg=smpi/test:1e-8 --cfg=smpi/iprobe:1e-8 --cfg=smpi/grow-injected-times:no \
          --cfg=smpi/shared-malloc-blocksize:67108864 \
          --cfg=smpi/coll-selector:"$selector" "${algorithm[@]}" ${SMPI_CFG:-} --log=root.thresh:error \
          "$build/smpi_bench" "$benchmark" --n "$n" --variant "$variant" --platform "$platform" \
          --link-bandwidth "$bandwidth" --reps "${REPS:-2}" --verify "$verify" --case "$layout_case" \
          --region "${REGION:-8}" --cost-model "${COST_MODEL:-calibrate}" "${extra[@]}" \
          2> "$build/last_run.err") || {
    code=$?
    if [ "$code" = 124 ]; then  # not a failure: the simulation outlived WALL_LIMIT
      echo "{\"benchmark\": \"$benchmark\", \"platform\": \"$platform\", \"ranks\": $ranks, \"n\": $n, \"case\": \"$layout_case\", \"variant\": \"$variant\", \"simulated_seconds\": null, \"verified\": false, \"note\": \"simulation did not finish in ${WALL_LIMIT} s of wall time\"}"
      continue
    fi
    echo "run.sh: $variant failed:" >&2; tail -20 "$build/last_run.err" >&2; status=1; continue; }
  line=$(grep '^{' <<< "$out" || true)
  if [ -z "$line" ]; then echo "run.sh: $variant printed no result" >&2; tail -20 "$build/last_run.err" >&2; status=1; continue; fi
  echo "$line"
  results+=("$line")
  if [ "$verify" = 1 ] && ! grep -q '"verified": true' <<< "$line"; then
    echo "run.sh: $variant: result not verified" >&2; status=1
  fi
done
# One line for people: each variant's simulated time, and how far the best redist variant is from the best baseline
# (MPI's collectives, the SUMMA, ScaLAPACK) and from the bound.
printf '%s\n' "${results[@]}" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
done = [r for r in rows if r["simulated_seconds"] is not None]
if done:
    parts = ", ".join("%s %.3g ms" % (r["variant"], r["simulated_seconds"] * 1e3) for r in done)
    best = lambda ours: min((r["simulated_seconds"] for r in done if r["variant"].startswith("redist:") == ours),
                            default=None)
    ours, theirs, bound = best(True), best(False), done[0].get("bound_seconds")
    ratio = " ; best baseline / best redist %.2f" % (theirs / ours) if ours and theirs else ""
    over = " ; best redist / bound %.2f" % (ours / bound) if ours and bound else ""
    r0 = rows[0]
    print("SUMMARY %s %s P=%d N=%d: %s%s%s" % (r0["benchmark"], r0["platform"], r0["ranks"], r0["n"], parts, ratio, over))
'
exit $status
