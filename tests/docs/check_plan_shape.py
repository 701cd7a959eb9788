# SPDX-License-Identifier: BSD-3-Clause
"""Every capability's plan has one shape in C++, C and Python (issue 61), read from the public headers, the C
header and the Python stubs:
  C++     make_<capability>_plan(MPI_Comm comm, ...) returning a plan with execute, start, wait, statistics and
          communicator;
  C       redist_<capability>_plan_create(MPI_Comm comm, ...), _execute, _start, _wait (the handle first) and
          _free (a pointer to it), one handle type redist_<capability>_plan;
  Python  make_<capability>_plan(comm, ...) returning a class with execute, start, wait and statistics.
Transforms and multiplies have no C plan handle (CAPABILITIES says so): their C door is the ScaLAPACK interface
(p?gemr2d, p?tran, p?gemm), which plans behind each call. Usage: check_plan_shape.py SOURCE_DIR; prints one line
per problem and exits 1 when there is any."""
import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1])

# capability: (C++ header, C++ plan class, Python plan class, has a C door)
CAPABILITIES = {
    "transform": ("include/redist/transform/plan.hpp", "transform_plan", "TransformPlan", False),
    "reshape": ("include/redist/transform/plan.hpp", "transform_plan", "TransformPlan", True),
    "gemm": ("include/redist/gemm/gemm.hpp", "gemm_plan", "GemmPlan", False),
    "neighbor": ("include/redist/exchange/neighbor.hpp", "neighbor_plan", "NeighborPlan", True),
    "inplace": ("include/redist/exchange/inplace.hpp", "inplace_plan", "InplacePlan", True),
}
CPP_METHODS = ("execute", "start", "wait", "statistics", "communicator")
C_CALLS = ("create", "execute", "start", "wait", "free")
PYTHON_METHODS = ("execute", "start", "wait", "statistics")


problems = []


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def class_body(text, name):
    m = re.search(r"\bclass\s+" + name + r"\s*(?:final\s*)?\{", text)
    if not m:
        return None
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i]


def note(language, capability, found, what):
    if not found:
        problems.append(f"{language} {capability}: {what}")


# C++
for capability, (header, plan_class, _, _) in CAPABILITIES.items():
    text = strip_comments((ROOT / header).read_text())
    # Every overload (friend declarations, which name no parameters, aside).
    firsts = [m.group(1).strip() for m in
              re.finditer(r"(?<!friend )" + plan_class + r"\s+make_" + capability + r"_plan\s*\(\s*([^,)]*)", text)]
    note("C++", capability, bool(firsts), f"no {plan_class} make_{capability}_plan(...) in {header}")
    for first in firsts:
        note("C++", capability, re.fullmatch(r"MPI_Comm\s+comm", first) is not None,
             f"a make_{capability}_plan's first parameter is '{first}', expected 'MPI_Comm comm'")
    body = class_body(text, plan_class) or ""
    for method in CPP_METHODS:
        note("C++", capability, re.search(r"\b" + method + r"\s*\(", body) is not None,
             f"{plan_class} has no {method}()")

# C
c_text = strip_comments((ROOT / "include/redist/redist.h").read_text())
for capability, (_, _, _, has_c) in CAPABILITIES.items():
    if not has_c:
        continue
    handle = f"redist_{capability}_plan"
    note("C", capability, re.search(r"typedef\s+[^;]*\b" + handle + r"\s*;", c_text) is not None,
         f"no handle type {handle}")
    for call in C_CALLS:
        m = re.search(r"\bint\s+" + handle + "_" + call + r"\s*\(\s*([^,)]*)", c_text)
        if call == "create":
            expected = r"MPI_Comm\s+comm"
        elif call == "free":
            expected = handle + r"\s*\*\s*plan"
        else:
            expected = handle + r"\s+plan"
        ok = m is not None and re.fullmatch(expected, m.group(1).strip()) is not None
        note("C", capability, ok,
             f"{handle}_{call}: " + ("missing" if m is None else f"first parameter '{m.group(1).strip()}'"))

# Python
stubs = ast.parse((ROOT / "python/redist/_redist.pyi").read_text())
functions = {n.name: n for n in stubs.body if isinstance(n, ast.FunctionDef)}
classes = {n.name: {m.name for m in n.body if isinstance(m, ast.FunctionDef)} for n in stubs.body
           if isinstance(n, ast.ClassDef)}
for capability, (_, _, python_class, _) in CAPABILITIES.items():
    f = functions.get(f"make_{capability}_plan")
    note("Python", capability, f is not None, f"no make_{capability}_plan")
    if f is not None:
        first = f.args.args[0].arg if f.args.args else None
        note("Python", capability, first == "comm",
             f"make_{capability}_plan's first argument is {first!r}, expected 'comm'")
        returns = ast.unparse(f.returns) if f.returns is not None else ""
        note("Python", capability, returns.strip("'\"") == python_class,
             f"make_{capability}_plan returns {returns!r}, expected {python_class}")
    for method in PYTHON_METHODS:
        note("Python", capability, method in classes.get(python_class, set()),
             f"{python_class} has no {method}()")

for line in problems:
    print("plan shape:", line)
print(f"plan shape: {len(CAPABILITIES)} capabilities checked in C++, C and Python; {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
