#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plot bench_torus_fig3's JSON: simulated transpose gain over Base per system size, like the paper's Fig. 3.

    python3 bench/torus_plot.py torus_fig3_uniform.json [more.json ...] --out torus_fig3.png

One row per JSON file (e.g. one per hardware routing model). Left: random mapping; right: default (XYZ) mapping. Lines: SDR with the paper's parameters and automatic
SDR, solid on tori everywhere, dashed where systems below 1024 nodes are meshes (as on Blue Gene/P).
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json_files", nargs="+")
    parser.add_argument("--out", default="torus_fig3.png")
    args = parser.parse_args()
    runs = []
    for name in args.json_files:
        with open(name) as f:
            runs.append(json.load(f))
    fig, axes = plt.subplots(len(runs), 2, figsize=(11, 3.6 * len(runs)), sharey="row", squeeze=False)
    styles = {"torus": "-", "bgp": "--"}
    colors = {"sdr": "tab:blue", "auto": "tab:orange"}
    labels = {"sdr": "SDR (alpha .5, beta 1024, gamma 2, delta 2)", "auto": "automatic SDR"}
    for row_axes, data in zip(axes, runs):
        rows = data["rows"]
        for ax, mapping in zip(row_axes, ["random", "default"]):
            for network in sorted({r["network"] for r in rows}, reverse=True):
                sel = sorted((r for r in rows if r["mapping"] == mapping and r["network"] == network),
                             key=lambda r: r["nodes"])
                if not sel:
                    continue
                nodes = [r["nodes"] for r in sel]
                for method in ["sdr", "auto"]:
                    gains = [100 * r[method]["gain"] for r in sel]
                    name = labels[method] + (", torus" if network == "torus" else ", mesh below 1024 (BG/P)")
                    ax.plot(nodes, gains, styles[network], marker="o", color=colors[method], label=name)
            ax.axhline(0, color="gray", linewidth=0.8)
            ax.set_xscale("log", base=2)
            by_size = sorted({r["nodes"]: r for r in rows}.values(), key=lambda r: r["nodes"])
            ax.set_xticks([r["nodes"] for r in by_size])
            ax.set_xticklabels([f'{r["nodes"]}\n{r["dims"].split(" ")[0]}' for r in by_size], fontsize=8)
            ax.set_title(f'{mapping} mapping, {data["hardware"]} hardware routing', fontsize=10)
            ax.grid(alpha=0.3)
        row_axes[0].set_ylabel("simulated gain over Base (%)")
    for ax in axes[-1]:
        ax.set_xlabel("nodes (torus dimensions)")
    axes[0][1].legend(fontsize=7, loc="best")
    fig.suptitle("Multi-phase transpose in the link-load simulator; "
                 "paper on Blue Gene/P: 12-35% (random mapping), 11-29% (default)", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
