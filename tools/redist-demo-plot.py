#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plot of a redist-demo run: speedup over ScaLAPACK per operation, and what relabeling saves.

    python3 tools/redist-demo-plot.py redist-demo.json [redist-demo.png]
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    source = Path(sys.argv[1])
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else source.with_suffix(".png")
    demo = json.loads(source.read_text())
    ops = demo["operations"]

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 1]})
    labels = [f'{o["operation"]}\n({o["redist_path"]})' for o in ops]
    speedups = [o["speedup"] for o in ops]
    colors = ["tab:blue" if o["redist_path"].startswith("drop-in") else "tab:purple" for o in ops]
    bars = left.bar(range(len(ops)), speedups, color=colors)
    for bar, o in zip(bars, ops):
        left.annotate(f'{o["speedup"]:.2f}x\n{o["redist_seconds"]:.3f} s vs {o["scalapack_seconds"]:.3f} s',
                      (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    left.axhline(1.0, color="gray", linewidth=0.8)
    left.set_xticks(range(len(ops)), labels, fontsize=8)
    left.set_ylabel("speedup over ScaLAPACK (same run)")
    left.set_ylim(0, max(speedups) * 1.3)
    left.set_title(f'redist vs ScaLAPACK, N = {demo["n"]} doubles, {demo["ranks"]} ranks')

    relabel = demo["relabeling"]
    mb = [relabel["remote_volume_before"] / 1e6, relabel["remote_volume_after"] / 1e6]
    right.bar([0, 1], mb, color=["tab:gray", "tab:green"])
    for x, v in enumerate(mb):
        right.annotate(f"{v:.1f} MB", (x, v), ha="center", va="bottom", fontsize=9)
    right.set_xticks([0, 1], ["fixed target", "relabeled"])
    right.set_ylabel("remote volume per execution (MB)")
    right.set_ylim(0, max(mb + [1.0]) * 1.25)
    right.set_title("process relabeling")

    status = "all results verified" if demo["verified"] else "VERIFICATION FAILED"
    fig.suptitle(status, fontsize=9, y=0.02)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(target, dpi=120)
    print(f"plot written to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
