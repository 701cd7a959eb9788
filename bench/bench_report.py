# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the Python benchmarks of bench/ (run as scripts, so bench/ is on their import path)."""
import json

import numpy as np


def squarest_grid(size):
    """The P x Q process grid with P * Q = size and P <= Q as close as they come."""
    p = int(np.sqrt(size))
    while size % p:
        p -= 1
    return p, size // p


def emit_json(report, path, indent=1):
    """Writes the report to `path`, or prints it when no path is given; True when written to the file."""
    text = json.dumps(report, indent=indent)
    if not path:
        print(text)
        return False
    with open(path, "w") as out:
        out.write(text + "\n")
    return True
