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


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_not_import_ui_libraries(starts_processes, module):
    code = (
        f"import sys, json, {module}\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in {'textual', 'rich'})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [], f"{module} pulled in a UI library"


def test_the_check_can_fail(starts_processes):
    code = (
        "import sys, textual.app; "
        "print(sorted(m for m in sys.modules if m.startswith('textual'))[:1])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert "textual" in result.stdout


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
