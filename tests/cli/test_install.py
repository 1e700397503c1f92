"""Install like the tools around it: the viewer's own dependencies are small; the emulator,
`serve` and PNG output are extras, and a command whose extra is missing says which one to
install (one line, exit 2). `make` installs everything through [test]."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VIEWER_MODULES = [
    "awsview.cli.main",
    "awsview.ui.viewer.app",
    "awsview.polling.live",
    "awsview.cli.dump",
    "awsview.ui.classview.view",
    "awsview.capture.shot",
    "awsview.labs.player",
    "awsview.aws.policy",
    "awsview.classroom.monitor",
]
EXTRA_MODULES = {"moto", "werkzeug", "flask", "PIL", "textual_serve"}


def without(module: str, *argv: str) -> subprocess.CompletedProcess:
    """`awsview ARGV` as if ``module`` were not installed."""
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        f"from awsview.cli.main import main\nraise SystemExit(main({list(argv)!r}))"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "module,extra,argv",
    [
        ("moto", "emulator", ["emulator", "--port", "0"]),
        ("moto", "emulator", ["demo"]),
        ("werkzeug", "emulator", ["docs", "q05", "-o", "out"]),
        ("textual_serve", "serve", ["serve", "--endpoint-url", "http://127.0.0.1:9"]),
        ("PIL", "png", ["screenshot", "-o", "view.png", "--endpoint-url", "http://127.0.0.1:9"]),
        ("PIL", "png", ["docs", "q05", "-o", "out", "--format", "png"]),
    ],
)
def test_a_missing_extra_says_which_to_install(starts_processes, module, extra, argv):
    result = without(module, *argv)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (
        f"needs the {extra} extra" in result.stderr
        and f"pipx install 'awsview[{extra}]'" in result.stderr
    )


def test_the_viewer_runs_without_any_extra(starts_processes):
    code = (
        "import sys, json, " + ", ".join(VIEWER_MODULES) + "\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{sorted(EXTRA_MODULES)!r})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
    assert without("moto", "lab", "list").returncode == 0
    assert without("PIL", "iam-policy", "--lab", "q05").returncode == 0


def test_dependencies_and_extras():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    for heavy in ("moto", "werkzeug", "textual-serve", "pillow"):
        assert heavy not in core
    extras = project["optional-dependencies"]
    assert {"emulator", "serve", "png", "all", "test"} <= set(extras)
    assert "awsview[emulator,serve,png,docs]" in extras["test"]  # `make` installs everything
    assert "version" in project["dynamic"]  # one version: awsview.__version__


TEST_HELPERS = (
    "sample.py",
    "probe.py",
    "testing.py",
    "helpers.py",
    "conftest.py",
    "browser.py",
    "record_probe.py",
)


@pytest.mark.timeout(600)
def test_the_wheel_holds_the_package_and_its_data_and_no_test_helper(starts_processes, tmp_path):
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("awsview-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    files = [n for n in names if ".dist-info/" not in n]
    print("\n".join(files))  # the list, for whoever reads the test's output
    assert all(n.startswith("awsview/") for n in files)
    assert not [n for n in files if n.rsplit("/", 1)[-1] in TEST_HELPERS or "/tests/" in n]
    assert not [
        n
        for n in files
        if "unittest" in zipfile.ZipFile(wheel).read(n).decode("utf-8", "replace")
        and n.endswith(".py")
    ]  # no test double in the package
    assert "awsview/kinds.py" in files and "awsview/cli/common.py" in files
    assert any(n.startswith("awsview/_data/themes/") for n in files)
    assert {
        f"awsview/_data/labs/{lab}/{name}"
        for lab in ("ev04", "ev05", "q05")
        for name in ("index.json", "awsview.toml")
    } <= set(files)  # the built-in lab folders
    # pyproject says MIT: the licence text travels with the wheel.
    licence = [n for n in names if ".dist-info/" in n and n.rsplit("/", 1)[-1] == "LICENSE"]
    assert licence, [n for n in names if ".dist-info/" in n]
    assert "MIT License" in zipfile.ZipFile(wheel).read(licence[0]).decode()


def test_the_licence_is_the_one_pyproject_names():
    text = (ROOT / "LICENSE").read_text()
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "MIT"
    assert text.startswith("MIT License\n\nCopyright (c) 2026 AWS View contributors\n")


def test_the_ranges_hold_what_is_installed_and_tested():
    """The floors keep out the advisories that reach what AWS View uses; the caps stop at the
    minor after the one tested, where compat.py's private accesses may break."""
    from importlib.metadata import version

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"]] + [
        Requirement(r) for r in project["optional-dependencies"]["serve"]
    ]
    by_name = {r.name: r for r in wanted}
    for name in ("textual", "rich", "textual-serve", "aiohttp"):
        assert by_name[name].specifier.contains(version(name)), (name, version(name))
    for name, outside in (
        ("aiohttp", "3.14.2"),  # WebSocket-upgrade smuggling, C parser out-of-bounds read
        ("aiohttp", "3.10.10"),
        ("textual", "8.3.0"),
        ("rich", "15.1.0"),
        ("textual-serve", "1.2.0"),
    ):
        assert not by_name[name].specifier.contains(outside), (name, outside)
