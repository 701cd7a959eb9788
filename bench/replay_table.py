#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The replays of bench/replay_traces.sh as one table (OUT_DIR/replay.md) against issue 57's targets, a figure
(OUT_DIR/replay.png, where matplotlib is installed) and a SUMMARY line.
Targets: every class <= 1.05x ScaLAPACK's median; classes of copies (p?gemr2d, p?trmr2d) >= 1.5x faster
(<= 0.667x); whole traces <= 0.9x with redistributions (copies, transposes), <= 1.02x of products only.
Where OUT_DIR/noise_floor/ holds replays of the same traces with ScaLAPACK on both sides (replay_traces.sh
--noise-floor), a column gives each class's ratio there: how far from 1 the same code reads on this machine.
usage: replay_table.py OUT_DIR"""
import glob
import json
import os
import sys

out = sys.argv[1]
runs = {os.path.basename(p)[:-5]: json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, "*.json")))}
noise = {}  # (trace, class or None for the whole trace) -> ScaLAPACK/ScaLAPACK ratio
for p in glob.glob(os.path.join(out, "noise_floor", "*.json")):
    run = json.load(open(p))
    name = os.path.basename(p)[:-5]
    noise[(name, None)] = run["total"]["ratio"]
    for c in run["classes"]:
        noise[(name, c["class"])] = c["ratio"]


def noise_text(name, cls):
    return f"{noise[(name, cls)]:.3f}x" if (name, cls) in noise else "-"


def within_noise(name, cls, ratio):  # no further above 1 than the same code read
    return (name, cls) in noise and ratio <= max(noise[(name, cls)], 1 / noise[(name, cls)])


lines = ["| trace | signature class | calls | ScaLAPACK ms/call | redist ms/call | ratio | target | met | "
         "noise floor | redist's path |",
         "|---|---|---|---|---|---|---|---|---|---|"]
misses, rows, within = [], [], 0
for name, run in runs.items():
    redistributes = any(c["class"].split()[0][2:] in ("GEMR2D", "TRMR2D") or c["class"].split()[0][2:5] == "TRA"
                        for c in run["classes"])
    for c in run["classes"]:
        copy = c["class"].split()[0][2:] in ("GEMR2D", "TRMR2D")
        target = 0.667 if copy else 1.05
        met = c["ratio"] <= target and c["results_agree"]
        rows.append((name, c["class"], c["ratio"]))
        lines.append(f"| {name} | {c['class']} | {c['calls']} | {1e3 * c['scalapack_median_seconds_per_call']:.3f} | "
                     f"{1e3 * c['redist_median_seconds_per_call']:.3f} | {c['ratio']:.3f}x | <= {target}x | "
                     f"{'yes' if met else 'NO'} | {noise_text(name, c['class'])} | "
                     f"{', '.join(c.get('replayed_paths', []))} |")
        if not met:
            misses.append(f"{name}: {c['class']} {c['ratio']:.2f}x")
            within += c["results_agree"] and within_noise(name, c["class"], c["ratio"])
    total = run["total"]
    target = 0.9 if redistributes else 1.02
    met = total["ratio"] <= target and run["results_agree"]
    lines.append(f"| {name} | **whole trace** | | {1e3 * total['scalapack_seconds']:.3f} (total) | "
                 f"{1e3 * total['redist_seconds']:.3f} (total) | {total['ratio']:.3f}x | <= {target}x | "
                 f"{'yes' if met else 'NO'} | {noise_text(name, None)} | |")
    if not met:
        misses.append(f"{name}: whole trace {total['ratio']:.2f}x")
        within += run["results_agree"] and within_noise(name, None, total["ratio"])
open(os.path.join(out, "replay.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 0.28 * len(rows) + 1.5))
    labels = [f"{n}: {c}" for n, c, _ in rows]
    ratios = [r for _, _, r in rows]
    ax.barh(range(len(rows)), ratios, color=["tab:green" if r <= 1.05 else "tab:red" for r in ratios])
    floor = [(i, noise[(n, c)]) for i, (n, c, _) in enumerate(rows) if (n, c) in noise]
    if floor:
        ax.scatter([f for _, f in floor], [i for i, _ in floor], marker="|", color="black", s=40, zorder=3,
                   label="noise floor: ScaLAPACK / ScaLAPACK, same harness")
        ax.legend(loc="lower right", fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.axvline(1.05, color="gray", linestyle="--", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("redist / ScaLAPACK, median time per call (same run, interleaved)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "replay.png"), dpi=120)
except ImportError:
    print("(no matplotlib: replay.png not drawn)")
print(f"SUMMARY replay_traces: {len(runs)} traces, {len(rows)} classes, "
      f"{'every target met' if not misses else 'missed: ' + '; '.join(misses)}"
      + (f" ({within} of the {len(misses)} misses no further above 1 than their class's noise floor)"
         if noise and misses else ""))
