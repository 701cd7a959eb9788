#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Medians over the rounds of bench/side_by_side.sh: first calls and steady times of pdgemr2d/pdtran against
ScaLAPACK and COSTA (sweep.jsonl), the local copy against memcpy and COSTA (transform.jsonl), and pdgemm against
ScaLAPACK and COSMA (gemm.jsonl), as Markdown tables. Ratios are per round, then the median of the rounds.
bench/side_by_side_plot.py draws the same medians.

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


def load(out):
    """The rounds of each program in an output directory of side_by_side.sh: (sweep, transform, gemm)."""
    return tuple(rounds(Path(out) / f"{name}.jsonl") for name in ("sweep", "transform", "gemm"))


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def first_call_rows(runs):
    """Per routine and N: the medians of the first calls, their ratios and the steady speedups."""
    rows = []
    keys = sorted({(p["routine"], p["n"]) for r in runs for p in r["points"]}, key=lambda k: (k[1], k[0]))
    for routine, n in keys:
        points = [p for r in runs for p in r["points"] if (p["routine"], p["n"]) == (routine, n)]
        rows.append({
            "routine": routine, "n": n,
            "first": median([p["first_call_seconds"] for p in points]),
            "scalapack_first": median([p["scalapack_first_call_seconds"] for p in points]),
            "costa_first": median([p.get("costa_first_call_seconds") for p in points]),
            "to_scalapack": median([p["first_call_seconds"] / p["scalapack_first_call_seconds"] for p in points]),
            "to_costa": median([p["first_call_seconds"] / p["costa_first_call_seconds"] for p in points
                                if p.get("costa_first_call_seconds")]),
            "steady_vs_scalapack": median([p["speedup"] for p in points]),
            "steady_vs_costa": median([p.get("speedup_vs_costa") for p in points])})
    return rows


def local_copy_rows(runs):
    """Per N: the local copy's medians against memcpy and COSTA."""
    rows = []
    for n in sorted({c["n"] for r in runs for c in r["cases"] if c["case"] == "pdgemr2d_local"}):
        cases = [c for r in runs for c in r["cases"] if c["case"] == "pdgemr2d_local" and c["n"] == n]
        rows.append({"n": n, "memcpy": median([c["memcpy_seconds"] for c in cases]),
                     "redist": median([c["redist_seconds"] for c in cases]),
                     "to_memcpy": median([c["redist_seconds"] / c["memcpy_seconds"] for c in cases]),
                     "costa": median([c.get("costa_seconds") for c in cases]),
                     "vs_costa": median([c.get("speedup_vs_costa") for c in cases])})
    return rows


def gemm_rows(runs):
    """Per shape, in the order first run: the medians against ScaLAPACK and COSMA."""
    names = []
    for r in runs:
        for s in r["shapes"]:
            if s["name"] not in names:
                names.append(s["name"])
    rows = []
    for name in names:
        shapes = [s for r in runs for s in r["shapes"] if s["name"] == name]
        rows.append({"shape": name, "scalapack": median([s["scalapack_seconds"] for s in shapes]),
                     "cosma": median([s.get("cosma_seconds") for s in shapes]),
                     "redist": median([s["redist_seconds"] for s in shapes]),
                     "vs_scalapack": median([s["speedup"] for s in shapes]),
                     "vs_cosma": median([s.get("speedup_vs_cosma") for s in shapes]), "grid": shapes[-1]["grid"]})
    return rows


def sweep_table(runs):
    print(f"First calls (plan + one execution) and steady times, {len(runs)} rounds, medians:\n")
    print("| routine | N | ScaLAPACK first | COSTA first | redist first | redist / ScaLAPACK | redist / COSTA "
          "| steady: redist vs ScaLAPACK | redist vs COSTA |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in first_call_rows(runs):
        print(f"| {r['routine']} | {r['n']} | {fmt(r['scalapack_first'])} | {fmt(r['costa_first'])} "
              f"| {fmt(r['first'])} | {fmt(r['to_scalapack'], 2)}x | {fmt(r['to_costa'], 2)}x "
              f"| {fmt(r['steady_vs_scalapack'], 2)}x | {fmt(r['steady_vs_costa'], 2)}x |")
    print()


def local_copy_table(runs):
    print(f"The local copy (pdgemr2d, same layout on both sides), {len(runs)} rounds, medians:\n")
    print("| N | memcpy s | redist s | redist time / memcpy time | COSTA s | redist vs COSTA |")
    print("|---|---|---|---|---|---|")
    for r in local_copy_rows(runs):
        print(f"| {r['n']} | {fmt(r['memcpy'], 4)} | {fmt(r['redist'], 4)} | {fmt(r['to_memcpy'], 2)}x "
              f"| {fmt(r['costa'], 4)} | {fmt(r['vs_costa'], 2)}x |")
    print()


def gemm_table(runs):
    print(f"pdgemm, {len(runs)} rounds, medians (best of the repetitions in each round):\n")
    print("| shape | ScaLAPACK s | COSMA s | redist s | redist vs ScaLAPACK | redist vs COSMA | grid |")
    print("|---|---|---|---|---|---|---|")
    for r in gemm_rows(runs):
        print(f"| {r['shape']} | {fmt(r['scalapack'], 4)} | {fmt(r['cosma'], 4)} | {fmt(r['redist'], 4)} "
              f"| {fmt(r['vs_scalapack'], 2)}x | {fmt(r['vs_cosma'], 2)}x | {r['grid']} |")
    print()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sweep, transform, gemm = load(sys.argv[1])
    if not (sweep or transform or gemm):
        sys.exit(f"{sys.argv[1]}: no sweep.jsonl, transform.jsonl or gemm.jsonl with results")
    if sweep:
        sweep_table(sweep)
    if transform:
        local_copy_table(transform)
    if gemm:
        gemm_table(gemm)


if __name__ == "__main__":
    main()
