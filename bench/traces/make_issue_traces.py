#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the traces of bench/traces/ that no program here records: the calls issue 57 quotes from an
electronic-structure code (two p?gemm signatures of its eigensolver on a 2 x 1 grid, with the moving sizes
and offsets it makes them with; a redistribution from a library's layout to a solver's, 4 -> 2 ranks and blocks
24 -> 16, the ranks off the solver's grid passing descriptors of all -1; the transposes it makes on a 2 x 2 grid of
32 x 32 blocks, 736 x 736 and 128 x 128). Same format as REDIST_TRACE=calls
(docs/trace.md). usage: make_issue_traces.py [TRACES_DIR]"""
import json
import os
import sys


def numroc(n, nb, iproc, isrc, nprocs):
    """Rows (or columns) of an n-long block-cyclic dimension on process iproc."""
    d = (iproc - isrc) % nprocs
    blocks, extra = divmod(n, nb)
    count = (blocks // nprocs) * nb
    rest = blocks % nprocs
    if d < rest:
        count += nb
    elif d == rest:
        count += extra
    return count


def descriptor(ctxt, m, n, mb, nb, rsrc, csrc, grid, pos):
    if pos is None:
        return [-1] * 9
    lld = max(1, numroc(m, mb, pos[0], rsrc, grid[0]))
    return [1, ctxt, m, n, mb, nb, rsrc, csrc, lld]


def write(folder, lines_by_rank):
    os.makedirs(folder, exist_ok=True)
    for rank, lines in enumerate(lines_by_rank):
        with open(os.path.join(folder, f"trace.{rank}.jsonl"), "w") as f:
            for seq, (entry, args) in enumerate(lines):
                f.write(json.dumps({"rank": rank, "seq": seq, "entry": entry, "path": "redist", "args": args},
                                   separators=(",", ":")) + "\n")


def gemm_signatures(out):
    """PDGEMM on a 2 x 1 grid (ranks 0, 1): C(ic.., jc..) = A(ia.., ja..) B(ib.., jb..), beta 0."""
    grid = (2, 1)
    calls = [  # (m, n, k, (ia, ja), a matrix, (ib, jb), b matrix, (ic, jc), c matrix), matrix = (M, N, RSRC)
        (352, 602, 352, (1, 1), (736, 736, 0), (1, 1), (736, 736, 0), (1, 1), (736, 736, 0)),
        (352, 603, 352, (1, 1), (736, 736, 0), (1, 1), (736, 736, 0), (1, 1), (736, 736, 0)),
        (192, 376, 186, (193, 191), (384, 384, 1), (191, 1), (384, 384, 1), (545, 353), (736, 736, 0)),
        (192, 376, 185, (193, 192), (384, 384, 1), (192, 1), (384, 384, 1), (545, 353), (736, 736, 0)),
        (250, 602, 251, (1, 1), (736, 736, 0), (1, 1), (736, 736, 0), (1, 1), (736, 736, 0)),
        (251, 603, 250, (1, 2), (736, 736, 0), (2, 1), (736, 736, 0), (1, 1), (736, 736, 0)),
    ]
    by_rank = []
    for rank in range(2):
        pos = (rank, 0)
        lines = []
        for _ in range(3):  # the eigensolver makes each again and again
            for m, n, k, (ia, ja), am, (ib, jb), bm, (ic, jc), cm in calls:
                lines.append(("PDGEMM", {
                    "type": "double", "transa": "N", "transb": "N", "m": m, "n": n, "k": k,
                    "alpha": [1.0], "beta": [0.0],
                    "ia": ia, "ja": ja, "desca": descriptor(0, am[0], am[1], 32, 32, am[2], 0, grid, pos),
                    "ib": ib, "jb": jb, "descb": descriptor(0, bm[0], bm[1], 32, 32, bm[2], 0, grid, pos),
                    "ic": ic, "jc": jc, "descc": descriptor(0, cm[0], cm[1], 32, 32, cm[2], 0, grid, pos),
                    "grid": [2, 1, rank, 0, 2]}))
        by_rank.append(lines)
    write(os.path.join(out, "issue57_pdgemm_signatures_np2"), by_rank)


def layout_to_solver(out):
    """PDGEMR2D of 736 x 736 from a 2 x 2 grid of 24 x 24 blocks (all 4 ranks, context 0) to a 2 x 1 grid of
    16 x 16 blocks (ranks 0 and 1, context 1; ranks 2 and 3 pass all -1), and back, three times each."""
    n = 736
    a_grid, b_grid = (2, 2), (2, 1)
    by_rank = []
    for rank in range(4):
        a_pos = divmod(rank, 2)
        b_pos = (rank, 0) if rank < 2 else None
        da = descriptor(0, n, n, 24, 24, 0, 0, a_grid, a_pos)
        db = descriptor(1, n, n, 16, 16, 0, 0, b_grid, b_pos)
        ga = [2, 2, a_pos[0], a_pos[1], 4]
        gb = [2, 1, b_pos[0], 0, 2] if b_pos else [-1] * 5
        lines = []
        for _ in range(3):
            for (src, dst, gs, gd) in ((da, db, ga, gb), (db, da, gb, ga)):
                lines.append(("PDGEMR2D", {"type": "double", "m": n, "n": n, "ia": 1, "ja": 1, "desca": src,
                                           "ib": 1, "jb": 1, "descb": dst, "ictxt": 0, "grid_a": gs, "grid_b": gd,
                                           "grid": ga}))
        by_rank.append(lines)
    write(os.path.join(out, "issue57_layout_to_solver_np4"), by_rank)


def transposes(out, grid):
    """PDTRAN on a grid of 32 x 32 blocks (ranks in row-major order): C = A^T of 736 x 736 and of 128 x 128,
    beta 0, each five times, and C = C + A^T of a 128 x 128 sub-matrix at (33, 65) of the 736 x 736 matrices."""
    ranks = grid[0] * grid[1]
    calls = [(736, 736, (1, 1), (1, 1), 0.0), (128, 128, (1, 1), (1, 1), 0.0), (128, 128, (33, 65), (65, 33), 1.0)]
    by_rank = []
    for rank in range(ranks):
        pos = divmod(rank, grid[1])
        lines = []
        for _ in range(5):
            for m, n, (ia, ja), (ic, jc), beta in calls:
                size = max(m, 736 if ia > 1 else m)
                d = descriptor(0, size, size, 32, 32, 0, 0, grid, pos)
                lines.append(("PDTRAN", {"type": "double", "m": m, "n": n, "alpha": [1.0], "beta": [beta],
                                         "ia": ia, "ja": ja, "desca": d, "ic": ic, "jc": jc, "descc": d,
                                         "grid": [grid[0], grid[1], pos[0], pos[1], ranks]}))
        by_rank.append(lines)
    write(os.path.join(out, f"issue57_pdtran_{grid[0]}x{grid[1]}_np{ranks}"), by_rank)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    gemm_signatures(out)
    layout_to_solver(out)
    transposes(out, (2, 2))  # the application's grid
    transposes(out, (1, 2))  # the same calls without oversubscribing a 2-core machine
