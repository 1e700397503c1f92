"""`awsview split`: inside a real, private tmux server (a shell pane runs it, a second pane runs
the viewer against the emulator, closing that pane leaves the shell as it was), and for zellij,
WezTerm and kitty the command lines their CLIs receive, recorded by a stand-in for each CLI on
PATH. The shell's credentials reach the pane through a private file, never a command line.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)

SECRET = "wJalrSplitTestSecretKEYnotREAL0000000000"


def until(predicate, what: str, timeout: float = 60.0, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        time.sleep(interval)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- a real tmux server ----------------------------------------------------------------------------


class Tmux:
    """A private tmux server (its own socket directory and name) with one shell pane."""

    def __init__(self, folder: Path):
        self.env = {
            "HOME": str(folder),
            "PATH": f"{Path(shutil.which('tmux')).parent}:/usr/bin:/bin",
            "TERM": "xterm-256color",
            "TMUX_TMPDIR": str(folder),
            "LANG": "C.UTF-8",
        }
        self.name = f"awsview-test-{os.getpid()}"

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def panes(self) -> list[tuple[str, int, str]]:
        listed = self(
            "list-panes", "-t", "t", "-F", "#{pane_id} #{pane_width} #{pane_current_command}"
        )
        return [(p, int(w), c) for p, w, c in (line.split(" ", 2) for line in listed.splitlines())]

    def screen(self, pane: str) -> str:
        return self("capture-pane", "-p", "-t", pane)

    def type(self, pane: str, line: str) -> None:
        self("send-keys", "-t", pane, "-l", line)
        self("send-keys", "-t", pane, "Enter")


@pytest.fixture
def tmux(starts_processes, tmp_path):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (make tools installs it)")
    server = Tmux(tmp_path)
    # The server's environment has no AWS settings: only the shell inside it gets them.
    server(
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "160",
        "-y",
        "50",
        "bash --norc --noprofile",
    )
    try:
        yield server
    finally:
        subprocess.run(
            ["tmux", "-L", server.name, "kill-server"],
            env=server.env,
            capture_output=True,
            timeout=30,
        )


def test_split_in_tmux_opens_the_viewer_beside_the_shell_and_closing_it_leaves_the_shell(
    tmux, emulator, tmp_path
):
    handover = tmp_path / "tmp"
    handover.mkdir()
    ((shell, full, _),) = tmux.panes()
    tmux.type(
        shell,
        "PS1='shell$ '; export AWS_DEFAULT_REGION=us-east-1 AWS_ACCESS_KEY_ID=testing "
        f"AWS_SECRET_ACCESS_KEY={SECRET} TMPDIR={handover}; clear",
    )
    tmux.type(shell, "echo before-split")
    until(lambda: "before-split\nshell$" in tmux.screen(shell), "the shell answered")
    split = f"{sys.executable} -m awsview split --lab q05 --endpoint-url {emulator.endpoint_url}"
    tmux.type(shell, split)

    panes = until(lambda: len(tmux.panes()) == 2 and tmux.panes(), "a second pane")
    viewer = next(p for p, _, _ in panes if p != shell)
    widths = {p: w for p, w, _ in panes}
    assert abs(widths[viewer] - full // 2) <= 1 and widths[shell] + widths[viewer] + 1 == full
    # The viewer polls the emulator with the shell's credentials: panels answer, none in error.
    until(
        lambda: "Checkpoints · q05" in tmux.screen(viewer) and "no queues" in tmux.screen(viewer),
        "the viewer showing q05's panels",
    )
    assert "error" not in tmux.screen(viewer)
    assert "AWS View opened in a tmux pane on the right; q there closes it" in tmux.screen(shell)
    assert tmux("display-message", "-p", "-t", "t", "#{pane_id}").strip() == shell  # focus stayed
    assert list(handover.iterdir()) == []  # the pane read the handed-over settings and removed them

    tmux("send-keys", "-t", viewer, "q")
    until(lambda: len(tmux.panes()) == 1, "the viewer pane closed after q")
    assert tmux.panes()[0][:2] == (shell, full)
    tmux.type(shell, "echo still-here")
    screen = until(
        lambda: "still-here\nshell$" in tmux.screen(shell) and tmux.screen(shell),
        "the shell answers",
    )
    assert "before-split" in screen and split in screen.replace("\n", "")  # what was there stays

    tmux.type(shell, f"{split} --width 70")
    panes = until(lambda: len(tmux.panes()) == 2 and tmux.panes(), "a second pane, 70 wide")
    viewer = next(p for p, _, _ in panes if p != shell)
    assert {p: w for p, w, _ in panes}[viewer] == 70
    until(lambda: "Checkpoints · q05" in tmux.screen(viewer), "the viewer in the 70-column pane")
    viewer_pid = int(tmux("display-message", "-p", "-t", viewer, "#{pane_pid}"))
    tmux("kill-pane", "-t", viewer)  # closed from tmux this time
    until(lambda: len(tmux.panes()) == 1, "the pane gone")
    until(lambda: not alive(viewer_pid), "the viewer gone with its pane")
    tmux.type(shell, "echo after-kill")
    until(lambda: "after-kill\nshell$" in tmux.screen(shell), "the shell still answers")


# -- the other terminals, by the command lines their CLIs receive ----------------------------------
FAKE = """#!{python}
import json, os, sys
with open(os.environ["SPLIT_RECORD"], "a") as out:
    out.write(json.dumps([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\\n")
if os.environ.get("SPLIT_FAIL"):
    print(os.environ["SPLIT_FAIL"], file=sys.stderr)
    sys.exit(1)
"""


@pytest.fixture
def fake_terminals(starts_processes, tmp_path):
    """tmux, zellij, wezterm and kitty stand-ins that record their arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("tmux", "zellij", "wezterm", "kitty"):
        script = bin_dir / name
        script.write_text(FAKE.format(python=sys.executable))
        script.chmod(0o755)
    record = tmp_path / "calls.jsonl"
    handover = tmp_path / "tmp"
    handover.mkdir()

    def run(*args: str, **terminal: str):
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "SPLIT_RECORD": str(record),
            "TMPDIR": str(handover),
            "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_PROFILE": "lab",
            "UNRELATED": "x",
            **terminal,
        }
        if record.exists():
            record.unlink()
        shutil.rmtree(handover)
        handover.mkdir()
        done = subprocess.run(
            [sys.executable, "-m", "awsview", "split", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            cwd=tmp_path,
        )
        calls = (
            [json.loads(line) for line in record.read_text().splitlines()]
            if record.exists()
            else []
        )
        files = sorted(handover.rglob("*.json"))
        return done, calls, files

    return run


def pane(files: list[Path], *viewer: str) -> list[str]:
    (handed,) = files
    return [
        sys.executable,
        "-m",
        "awsview",
        "split",
        "--pane",
        "--environment",
        str(handed),
        "--",
        *viewer,
    ]


def test_zellij_runs_a_pane_on_the_right_that_closes_with_the_viewer(fake_terminals, tmp_path):
    done, calls, files = fake_terminals("--lab", "q05", ZELLIJ="0", ZELLIJ_SESSION_NAME="lab")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "AWS View opened in a zellij pane on the right; q there closes it"
    assert calls == [
        [
            "zellij",
            "run",
            "--direction",
            "right",
            "--close-on-exit",
            "--cwd",
            str(tmp_path),
            "--name",
            "AWS View",
            "--",
            *pane(files, "--lab", "q05"),
        ],
        ["zellij", "action", "move-focus", "left"],
    ]
    handed = json.loads(files[0].read_text())
    assert handed == {
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_PROFILE": "lab",
    }
    assert (
        stat.S_IMODE(files[0].stat().st_mode) == 0o600
        and stat.S_IMODE(files[0].parent.stat().st_mode) == 0o700
    )
    assert not any(SECRET in arg for call in calls for arg in call)
    done, _, _ = fake_terminals("--width", "30%", ZELLIJ="0")
    assert "(zellij chose its width)" in done.stdout


def test_wezterm_splits_the_current_pane_by_cells_or_percent_and_gives_the_focus_back(
    fake_terminals, tmp_path
):
    done, calls, files = fake_terminals(
        "--width",
        "80",
        "--endpoint-url",
        "http://127.0.0.1:5000",
        WEZTERM_PANE="7",
        TERM_PROGRAM="WezTerm",
    )
    assert done.returncode == 0, done.stderr
    assert calls == [
        [
            "wezterm",
            "cli",
            "split-pane",
            "--pane-id",
            "7",
            "--right",
            "--cells",
            "80",
            "--cwd",
            str(tmp_path),
            "--",
            *pane(files, "--endpoint-url", "http://127.0.0.1:5000"),
        ],
        ["wezterm", "cli", "activate-pane", "--pane-id", "7"],
    ]
    _, calls, _ = fake_terminals("--width", "40%", WEZTERM_PANE="7")
    assert calls[0][5:8] == ["--right", "--percent", "40"]


def test_kitty_launches_a_vsplit_by_remote_control_and_says_how_when_it_is_off(
    fake_terminals, tmp_path
):
    done, calls, files = fake_terminals(
        "--lab",
        "ev04",
        "--theme",
        "light",
        KITTY_WINDOW_ID="3",
        KITTY_LISTEN_ON="unix:/tmp/kitty-lab",
    )
    assert done.returncode == 0, done.stderr
    assert calls == [
        [
            "kitty",
            "@",
            "--to=unix:/tmp/kitty-lab",
            "launch",
            "--location=vsplit",
            "--keep-focus",
            f"--cwd={tmp_path}",
            "--title=AWS View",
            "--bias=50",
            "--",
            *pane(files, "--lab", "ev04", "--theme", "light"),
        ]
    ]
    done, calls, files = fake_terminals(
        "--width",
        "48",
        KITTY_WINDOW_ID="3",
        SPLIT_FAIL="Error: Remote control is disabled. Add allow_remote_control to kitty.conf",
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "awsview: kitty @ launch failed: Error: Remote control is disabled. Add "
        "allow_remote_control to kitty.conf (kitty needs `allow_remote_control yes` "
        "in kitty.conf)"
    ]
    assert "--bias=30" in calls[0]  # 48 of the 160 columns a terminal-less run assumes
    assert files == []  # nobody will read the handover: it is gone


def test_tmux_wins_inside_a_terminal_and_its_split_keeps_the_focus(fake_terminals, tmp_path):
    done, calls, files = fake_terminals(
        "--lab",
        "q05",
        TMUX="/tmp/tmux-1000/default,1,0",
        TMUX_PANE="%4",
        KITTY_WINDOW_ID="3",
        WEZTERM_PANE="2",
    )
    assert done.returncode == 0, done.stderr
    assert calls == [
        [
            "tmux",
            "split-window",
            "-h",
            "-d",
            "-l",
            "50%",
            "-t",
            "%4",
            "-c",
            str(tmp_path),
            "--",
            *pane(files, "--lab", "q05"),
        ]
    ]


def test_without_a_multiplexer_one_line_says_how(fake_terminals):
    done, calls, files = fake_terminals("--lab", "q05", "--profile", "my lab")
    assert done.returncode == 2 and calls == [] and files == [] and done.stdout == ""
    assert done.stderr.splitlines() == [
        "awsview: split needs tmux, zellij, WezTerm or kitty (with remote control on); in a "
        "terminal beside "
        "this one, run: awsview watch --lab q05 --profile 'my lab'"
    ]


@pytest.mark.parametrize(
    "args,said",
    [
        (
            ["--width", "wide"],
            "awsview: --width 'wide': give columns (80) or a share of the window (40%)",
        ),
        (["--width", "95%"], "awsview: --width 95%: a share between 10% and 90%"),
        (["--width", "3"], "awsview: --width 3: between 10 and 1000 columns"),
    ],
)
def test_a_bad_width_is_one_line_and_opens_nothing(fake_terminals, args, said):
    done, calls, files = fake_terminals(*args, TMUX="/tmp/x,1,0")
    assert done.returncode == 2 and calls == [] and files == []
    assert done.stderr.splitlines() == [said]


def test_a_viewer_argument_mistake_is_said_before_any_pane_opens(fake_terminals):
    done, calls, files = fake_terminals("--bogus", TMUX="/tmp/x,1,0")
    assert done.returncode == 2 and calls == [] and files == []
    assert "unrecognized arguments: --bogus" in done.stderr


def test_the_pane_takes_the_settings_over_removes_the_file_and_runs_the_viewer(
    starts_processes, tmp_path, monkeypatch
):
    import tempfile

    from awsview.cli.split import write_handover

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    handed = write_handover({"AWS_PROFILE": "from-the-shell", "PATH": "/nowhere"})
    assert Path(handed).parent.parent == tmp_path
    assert json.loads(Path(handed).read_text()) == {"AWS_PROFILE": "from-the-shell"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "awsview",
            "split",
            "--pane",
            "--environment",
            handed,
            "--",
            "--lab",
            "nosuch",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert (
        done.returncode == 2 and "nosuch" in done.stderr
    )  # the viewer's own message; no Enter asked off a terminal
    assert not Path(handed).exists() and not Path(handed).parent.exists()
