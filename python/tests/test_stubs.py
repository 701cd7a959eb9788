# SPDX-License-Identifier: BSD-3-Clause
"""The type stubs cover the compiled core: every public function and class of redist._redist (and every
public method and property of its classes) has a stub, and every stub names something that exists."""
import ast
import pathlib

import redist
from redist import _redist

STUBS = pathlib.Path(redist.__file__).with_name("_redist.pyi")


def stub_names():
    tree = ast.parse(STUBS.read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {item.name for item in node.body
                                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")}
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = None
    return names


def test_every_public_name_has_a_stub_and_every_stub_exists():
    stubs = stub_names()
    public = {name for name in dir(_redist) if not name.startswith("_")}
    assert public - set(stubs) == set(), "compiled names without a stub"
    assert {n for n in stubs if not n.startswith("_")} - public == set(), "stubs of names that do not exist"
    for name, members in stubs.items():
        if members is None or issubclass(getattr(_redist, name), BaseException):
            continue
        actual = {m for m in dir(getattr(_redist, name)) if not m.startswith("_")}
        assert actual == members, f"{name}: compiled {sorted(actual)} vs stubbed {sorted(members)}"
