"""The polling core, the model, the renderers and the emulator never import a UI library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Every module of the layers under the UI, found on disk (a new one is covered without a list to
# keep), and the commands that must start without one (dump, doctor).
UI_FREE = (
    "core",
    "model",
    "polling",
    "recording",
    "classroom",
    "doctor",
    "aws",
    "emulator",
    "labs",
)


def _modules() -> list[str]:
    found = [
        "awsview.labspec",
        "awsview.kinds",
        "awsview.cli.dump",
        "awsview.cli.doctor",
        "awsview.cli.common",
        "awsview.cli.extras",
        "awsview.capture.docs",
    ]
    for layer in UI_FREE:
        for path in sorted((ROOT / "awsview" / layer).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "workers" in parts or parts[-1] in ("_bootstrap", "_zygote"):  # lab code, scripts
                continue
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


CORE_MODULES = _modules()
FORBIDDEN = ("textual", "rich")

# Each module imported as if by a process of its own, without starting 100 interpreters: one
# interpreter imports what the modules import from outside the package (found by a first child
# that imports them all), checks that none of that is a UI library, then forks one child per
# module from that state, which imports the module and answers with the UI modules it pulled in.
# A library imported ahead is imported by the module too, so nothing it brings is missed: had it
# brought a UI library, the parent's own check would say so.
_CHECK = r"""
import importlib, json, os, sys

FORBIDDEN = set(json.loads(sys.argv[1]))
modules = json.loads(sys.argv[2])
ours = "awsview"


def ui():
    return sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN)


def in_child(work):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            answer = work()
        except BaseException as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(data)


def outside():
    for module in modules:
        try:
            importlib.import_module(module)
        except BaseException:
            pass
    return sorted(
        m for m in sys.modules
        if m.split(".")[0] not in FORBIDDEN | {ours, "__main__", "__mp_main__"}
    )


for name in in_child(outside):
    try:
        importlib.import_module(name)
    except BaseException:
        pass
answers = {"ahead": ui()}
for module in modules:
    answers[module] = in_child(lambda: importlib.import_module(module) and ui())
print(json.dumps(answers))
"""


def ui_imports(modules: list[str]) -> dict[str, object]:
    """For each module: the UI modules importing it pulls in (or ``{"error": ...}``); under
    ``"ahead"``, those the shared imports pulled in (none, or the check means nothing)."""
    result = subprocess.run(
        [sys.executable, "-c", _CHECK, json.dumps(FORBIDDEN), json.dumps(modules)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def core_imports(starts_processes) -> dict[str, object]:
    answers = ui_imports(CORE_MODULES)
    assert answers.pop("ahead") == [], "what the core imports from outside pulls in a UI library"
    return answers


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_not_import_ui_libraries(core_imports, module):
    assert core_imports[module] == [], f"{module} pulled in a UI library"


def test_the_check_can_fail(starts_processes):
    answers = ui_imports(["textual.app", "awsview.model.keys"])
    assert answers["ahead"] == []
    assert "textual" in answers["textual.app"]
    assert answers["awsview.model.keys"] == []


def test_no_import_cycle():
    """No module imports one that imports it back, lazily or not (grimp: import-linter's graph)."""
    import grimp

    graph = grimp.build_graph("awsview", exclude_type_checking_imports=True)
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    assert cycles == [], cycles
