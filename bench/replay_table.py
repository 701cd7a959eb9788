#!/usr/bin/env python3
"""The replays of bench/replay_traces.sh as one table (OUT_DIR/replay.md) against issue 57's targets, a figure
(OUT_DIR/replay.png, where matplotlib is installed) and a SUMMARY line.
Targets: every class <= 1.05x ScaLAPACK's median; classes of copies (p?gemr2d, p?trmr2d) >= 1.5x faster
(<= 0.667x); whole traces <= 0.9x with redistributions (copies, transposes), <= 1.02x of products only.
usage: replay_table.py OUT_DIR"""
import glob
import json
import os
import sys

out = sys.argv[1]
runs = {os.path.basename(p)[:-5]: json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, "*.json")))}
lines = ["| trace | signature class | calls | ScaLAPACK ms/call | redist ms/call | ratio | target | met | redist's path |",
         "|---|---|---|---|---|---|---|---|---|"]
misses, rows = [], []
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
                     f"{'yes' if met else 'NO'} | {', '.join(c.get('replayed_paths', []))} |")
        if not met:
            misses.append(f"{name}: {c['class']} {c['ratio']:.2f}x")
    total = run["total"]
    target = 0.9 if redistributes else 1.02
    met = total["ratio"] <= target and run["results_agree"]
    lines.append(f"| {name} | **whole trace** | | {1e3 * total['scalapack_seconds']:.3f} (total) | "
                 f"{1e3 * total['redist_seconds']:.3f} (total) | {total['ratio']:.3f}x | <= {target}x | "
                 f"{'yes' if met else 'NO'} | |")
    if not met:
        misses.append(f"{name}: whole trace {total['ratio']:.2f}x")
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
      f"{'every target met' if not misses else 'missed: ' + '; '.join(misses)}")
