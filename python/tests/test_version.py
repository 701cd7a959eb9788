# SPDX-License-Identifier: BSD-3-Clause
"""The package's version is the project's one version: CMakeLists.txt's project(), which also gives the C and C++
library's, pkg-config's and the CMake package's (checked by tests/install/run_install_test.sh)."""
import importlib.metadata
import pathlib
import re

import redist

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_version_is_the_projects():
    project = re.search(r"project\(redist VERSION ([0-9]+\.[0-9]+\.[0-9]+)", (ROOT / "CMakeLists.txt").read_text())
    assert project, "CMakeLists.txt has no project(redist VERSION x.y.z)"
    assert redist.__version__ == project.group(1)
    assert redist._redist.__version__ == project.group(1)
    assert importlib.metadata.version("redist") == project.group(1)
