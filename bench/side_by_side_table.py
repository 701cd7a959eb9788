#!/usr/bin/env python3
"""Medians over the rounds of bench/side_by_side.sh: first calls and steady times of pdgemr2d/pdtran against
ScaLAPACK and COSTA (sweep.jsonl), the local copy against memcpy and COSTA (transform.jsonl), and pdgemm against
ScaLAPACK and COSMA (gemm.jsonl), as Markdown tables. Ratios are per round, then the median of the rounds.

    python3 bench/side_by_side_table.py OUT_DIR
"""
import json
import statistics
import sys
from pathlib import Path


def rounds(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def sweep_table(runs):
    print(f"First calls (plan + one execution) and steady times, {len(runs)} rounds, medians:\n")
    print("| routine | N | ScaLAPACK first | COSTA first | redist first | redist / ScaLAPACK | redist / COSTA "
          "| steady: redist vs ScaLAPACK | redist vs COSTA |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(p["routine"], p["n"]) for r in runs for p in r["points"]}, key=lambda k: (k[1], k[0]))
    for routine, n in keys:
        points = [p for r in runs for p in r["points"] if (p["routine"], p["n"]) == (routine, n)]
        first = median([p["first_call_seconds"] for p in points])
        sl_first = median([p["scalapack_first_call_seconds"] for p in points])
        costa_first = median([p.get("costa_first_call_seconds") for p in points])
        to_sl = median([p["first_call_seconds"] / p["scalapack_first_call_seconds"] for p in points])
        to_costa = median([p["first_call_seconds"] / p["costa_first_call_seconds"] for p in points
                           if p.get("costa_first_call_seconds")])
        steady = median([p["speedup"] for p in points])
        steady_costa = median([p.get("speedup_vs_costa") for p in points])
        print(f"| {routine} | {n} | {fmt(sl_first)} | {fmt(costa_first)} | {fmt(first)} | {fmt(to_sl, 2)}x "
              f"| {fmt(to_costa, 2)}x | {fmt(steady, 2)}x | {fmt(steady_costa, 2)}x |")
    print()


def local_copy_table(runs):
    print(f"The local copy (pdgemr2d, same layout on both sides), {len(runs)} rounds, medians:\n")
    print("| N | memcpy s | redist s | redist time / memcpy time | COSTA s | redist vs COSTA |")
    print("|---|---|---|---|---|---|")
    for n in sorted({c["n"] for r in runs for c in r["cases"] if c["case"] == "pdgemr2d_local"}):
        cases = [c for r in runs for c in r["cases"] if c["case"] == "pdgemr2d_local" and c["n"] == n]
        ratio = median([c["redist_seconds"] / c["memcpy_seconds"] for c in cases])
        print(f"| {n} | {fmt(median([c['memcpy_seconds'] for c in cases]), 4)} "
              f"| {fmt(median([c['redist_seconds'] for c in cases]), 4)} | {fmt(ratio, 2)}x "
              f"| {fmt(median([c.get('costa_seconds') for c in cases]), 4)} "
              f"| {fmt(median([c.get('speedup_vs_costa') for c in cases]), 2)}x |")
    print()


def gemm_table(runs):
    print(f"pdgemm, {len(runs)} rounds, medians (best of the repetitions in each round):\n")
    print("| shape | ScaLAPACK s | COSMA s | redist s | redist vs ScaLAPACK | redist vs COSMA | grid |")
    print("|---|---|---|---|---|---|---|")
    names = []
    for r in runs:
        for s in r["shapes"]:
            if s["name"] not in names:
                names.append(s["name"])
    for name in names:
        shapes = [s for r in runs for s in r["shapes"] if s["name"] == name]
        print(f"| {name} | {fmt(median([s['scalapack_seconds'] for s in shapes]), 4)} "
              f"| {fmt(median([s.get('cosma_seconds') for s in shapes]), 4)} "
              f"| {fmt(median([s['redist_seconds'] for s in shapes]), 4)} | {fmt(median([s['speedup'] for s in shapes]), 2)}x "
              f"| {fmt(median([s.get('speedup_vs_cosma') for s in shapes]), 2)}x | {shapes[-1]['grid']} |")
    print()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    sweep, transform, gemm = (rounds(out / f"{name}.jsonl") for name in ("sweep", "transform", "gemm"))
    if not (sweep or transform or gemm):
        sys.exit(f"{out}: no sweep.jsonl, transform.jsonl or gemm.jsonl with results")
    if sweep:
        sweep_table(sweep)
    if transform:
        local_copy_table(transform)
    if gemm:
        gemm_table(gemm)


if __name__ == "__main__":
    main()
