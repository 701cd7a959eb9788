#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables (markdown) and a plot (PNG) of bench/smpi/run.sh's JSON lines.

    python3 bench/smpi/table.py results.jsonl [--png curves.png]

One table per (benchmark, case, N): a row per (platform, ranks), a column per variant (simulated ms; "dnf" where
the simulation was stopped), the link-rate bound, redist's plan time (first and second plan), and the ratios the
targets name: MPI_Alltoallv (mpich selector) over redist's point_to_point and point_to_point over the bound.
The plot: simulated time against ranks, one panel per platform (and case), one line per variant and the bound.
"""
import argparse
import collections
import json


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def ms(seconds):
    return "dnf" if seconds is None else f"{seconds * 1e3:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl")
    ap.add_argument("--png")
    args = ap.parse_args()
    rows = load(args.jsonl)
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault((r["benchmark"], r.get("case", ""), r["n"]), []).append(r)
    for (bench, case, n), rs in groups.items():
        variants = list(dict.fromkeys(r["variant"] for r in rs))
        print(f"\n**{bench}, case {case}, N = {n}** (simulated ms; one rank per host)\n")
        print("| platform | P | " + " | ".join(f"`{v}`" for v in variants) +
              " | bound | plan (first / second) | mpich / p2p | p2p / bound |")
        print("|---" * (len(variants) + 6) + "|")
        cells = collections.OrderedDict()
        for r in rs:
            cells.setdefault((r["platform"], r["ranks"]), {})[r["variant"]] = r
        for (platform, ranks), by in cells.items():
            line = [platform, str(ranks)] + [ms(by[v]["simulated_seconds"]) if v in by else "" for v in variants]
            any_row = next(iter(by.values()))
            bound = any_row.get("bound_seconds")
            p2p = by.get("redist:point_to_point", {})
            line.append(ms(bound) if bound is not None else "")
            if "plan_simulated_seconds" in p2p:
                line.append(f"{ms(p2p['plan_simulated_seconds'])} / {ms(p2p.get('second_plan_simulated_seconds'))}")
            else:
                line.append("")
            mpich = by.get("mpi:alltoallv:mpich", {}).get("simulated_seconds")
            t = p2p.get("simulated_seconds")
            line.append(f"{mpich / t:.2f}" if mpich and t else "")
            line.append(f"{t / bound:.2f}" if t and bound else "")
            print("| " + " | ".join(line) + " |")
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        # One panel per platform and case (a file may hold several layout cases of one benchmark).
        panels = list(dict.fromkeys((r["platform"], r.get("case", "")) for r in rows))
        several_cases = len({case for _, case in panels}) > 1
        fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
        for ax, (platform, case) in zip(axes[0], panels):
            series = collections.OrderedDict()
            bound = {}  # one bound per rank count: every variant of a run reports the same
            for r in rows:
                if r["platform"] != platform or r.get("case", "") != case:
                    continue
                if r["simulated_seconds"] is not None:
                    series.setdefault(r["variant"], []).append((r["ranks"], r["simulated_seconds"] * 1e3))
                if r.get("bound_seconds"):
                    bound.setdefault(r["ranks"], r["bound_seconds"] * 1e3)
            if bound:
                series["link-rate bound"] = list(bound.items())
            for name, pts in series.items():
                pts.sort()
                ax.plot([p for p, _ in pts], [t for _, t in pts], "--" if "bound" in name else "-o", label=name)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("simulated ranks")
            ax.set_ylabel("simulated ms")
            ax.set_title(f"{platform}, {case}" if several_cases else platform)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)


if __name__ == "__main__":
    main()
