"""Compile the venv and the project to bytecode once, on every core: what `make` runs after it
installs, so that no process of a run compiles a module from source (with
PYTHONDONTWRITEBYTECODE set, as in some shells and CI images, each would, every time).

Usage: VENV/bin/python .ci/bytecode.py DIR...: the interpreter's own packages (site-packages)
and each DIR.

Left out: packages that only moto services the emulator does not serve import (CloudFormation's
linter and the symbolic maths under it, AppSync's GraphQL), about half the venv's source by
size. Whatever imports one compiles it then, as without this step.

Why not `compileall -j 0` or `uv pip install --compile-bytecode`: both compile everything, and
compileall hands its pool one file at a time (chunk size 1), most of its time spent on the
hand-over; here each process takes every n-th file of one sorted list.
"""

from __future__ import annotations

import os
import py_compile
import sys
import sysconfig

NEVER_IMPORTED = frozenset({"sympy", "mpmath", "networkx", "cfnlint", "graphql"})


def sources(roots: list[str]) -> list[str]:
    found = []
    for root in roots:
        for folder, dirs, names in os.walk(root):
            left_out = NEVER_IMPORTED if folder == root else frozenset()
            dirs[:] = sorted(d for d in dirs if d not in left_out and d != "__pycache__")
            found += [os.path.join(folder, name) for name in names if name.endswith(".py")]
    return sorted(found)


def compile_each(files: list[str]) -> None:
    for path in files:
        try:
            py_compile.compile(path, doraise=True)
        except (py_compile.PyCompileError, OSError, ValueError):
            pass  # a template or a Python 2 file some package ships: nothing imports it


def main(roots: list[str]) -> int:
    files = sources([sysconfig.get_path("purelib"), *roots])
    workers = os.cpu_count() or 1
    children = []
    for k in range(workers):
        pid = os.fork()
        if pid == 0:
            compile_each(files[k::workers])
            os._exit(0)
        children.append(pid)
    failed = 0
    for pid in children:
        _, status = os.waitpid(pid, 0)
        failed |= status != 0
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
