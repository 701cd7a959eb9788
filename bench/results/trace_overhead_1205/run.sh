#!/usr/bin/env bash
# usage: OUT=dir bash run.sh (from the repository root). REDIST_TRACE off vs summary on bench_scalapack_sweep N = 4000 (4 ranks), 3 interleaved rounds.
for round in 1 2 3; do
  for mode in off summary; do
    OMP_NUM_THREADS=1 REDIST_TRACE=$mode mpiexec.mpich -n 4 build/bench/bench_scalapack_sweep --n 4000 --blocks 32 --reps 5 --json $OUT/$mode.$round.json > $OUT/$mode.$round.txt 2>&1
  done
done
