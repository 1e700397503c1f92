"""Lab folders: the platform's layout plus awsview.toml, loaded through one schema, found on the
search path, played and checked with `awsview lab play|check`, and `awsview verify`.

Everything goes through the command line, as a lab author runs it; the commands run against the
real embedded emulator (the module's `emulator`, or the one `lab check` starts itself)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from awsview.labs import fastcli
from tests.support import processes
from tests.support.emulator import RunningEmulator
from tests.support.helpers import processes as live_processes
from tests.support.helpers import wait_for

# Every test here starts the CLI or an emulator in a process of its own (tests/support/tiers.py).
pytestmark = pytest.mark.process

BUILTIN = Path(__file__).parents[2] / "labs"

INDEX = {
    "type": "lab",
    "title": "A Queue For Jobs",
    "description": "d",
    "difficulty": "Beginner",
    "time": 5,
    "details": {
        "steps": [
            {
                "title": "Create the Queue",
                "text": "step1.md",
                "verify": [
                    {
                        "name": "Queue Exists",
                        "file": "verify1-1.sh",
                        "hint": "create it",
                        "timeout": 20,
                    }
                ],
                "skills": [],
            }
        ],
        "intro": {"text": "intro.md"},
        "finish": {"text": "finish.md"},
    },
    "backend": {"imageid": "ttyd-ubuntu:2204"},
}
STEP = """# Create the queue

```bash
aws sqs create-queue --queue-name labex-t-jobs --query QueueUrl --output text
```

What it prints:

```text
http://127.0.0.1:5000/000000000000/labex-t-jobs
```
"""
VERIFY = "aws sqs get-queue-url --queue-name labex-t-jobs >/dev/null\n"
OWN = """prefix = "labex-t-"
panels = ["checkpoints", "queues"]

[[resources]]
kind = "queue"
name = "labex-t-jobs"
provided = false

[[steps]]
key = "queue"

[[steps.checkpoints]]
text = "the jobs queue exists"
query = "snapshots.queues.data[?name=='labex-t-jobs']"
now = "snapshots.queues.data[].name"
"""


def make_lab(
    where: Path,
    name: str = "tlab",
    step: str = STEP,
    verify: str = VERIFY,
    own: str = OWN,
    index: dict | None = None,
) -> Path:
    folder = where / name
    folder.mkdir(parents=True)
    (folder / "index.json").write_text(json.dumps(index or INDEX, indent=2))
    (folder / "step1.md").write_text(step)
    (folder / "verify1-1.sh").write_text(verify)
    (folder / "awsview.toml").write_text(own)
    return folder


def awsview(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    return processes.awsview(*args, env=env, timeout=timeout)


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --- the schema: each bad input is one line, file:line, exit 2 ----------------------------


BAD_OWN = [
    (
        OWN.replace("provided = false", "provded = false"),
        r"awsview.toml:7: unknown key 'resources\[1\]\.provded' \(did you mean 'provided'\?\)",
    ),
    (
        OWN.replace('prefix = "labex-t-"', "prefix = 7"),
        r"awsview.toml:1: 'prefix' must be a string",
    ),
    (
        OWN.replace('panels = ["checkpoints", "queues"]', 'panels = ["queues", "charts"]'),
        r"awsview.toml:2: 'panels': unknown panel 'charts'",
    ),
    (
        OWN.replace(
            "query = \"snapshots.queues.data[?name=='labex-t-jobs']\"",
            'query = "snapshots.[queues"',
        ),
        r"awsview.toml:14: 'steps\[1\]\.checkpoints\[1\]\.query': not a JMESPath expression",
    ),
    (
        OWN.replace(
            "query = \"snapshots.queues.data[?name=='labex-t-jobs']\"",
            'check = "queue labex-t-jobs emptyy"',
        ),
        r"awsview.toml:14: .*cannot read the statement 'queue labex-t-jobs emptyy'",
    ),
    (
        OWN.replace('key = "queue"', "key = 1"),
        r"awsview.toml:10: 'steps\[1\]\.key' must be a string, not an integer",
    ),
    (
        OWN + '\n[[steps]]\nkey = "more"\n',
        r"awsview.toml:9: 2 \[\[steps\]\] for the 1 steps of index.json",
    ),
    (OWN.replace("[[steps]]", "[[steps]"), r"awsview.toml:9: "),
]


@pytest.mark.parametrize(
    "own,expected",
    BAD_OWN,
    ids=["typo", "type", "panel", "jmespath", "statement", "key-type", "steps-count", "toml"],
)
def test_bad_awsview_toml_is_one_line_with_file_and_line(tmp_path: Path, own: str, expected: str):
    folder = make_lab(tmp_path, own=own)
    done = awsview("lab", "check", str(folder))
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert line.startswith(f"awsview: {folder}/awsview.toml:")
    assert re.search(expected, line), line


def _index_with(change) -> dict:
    index = json.loads(json.dumps(INDEX))
    change(index)
    return index


BAD_INDEX = [
    (
        _index_with(lambda i: i["details"]["steps"][0]["verify"][0].update(timeout="20")),
        r"index.json:17: 'details.steps\[1\].verify\[1\].timeout' must be an integer, not a string",
    ),
    (
        _index_with(lambda i: i["details"]["steps"][0].update(verfy=[])),
        r"index.json:\d+: unknown key 'details.steps\[1\].verfy' \(did you mean 'verify'\?\)",
    ),
    (
        _index_with(lambda i: i["details"]["steps"][0].update(text="step9.md")),
        r"index.json:\d+: step9.md is not in the lab folder",
    ),
    (_index_with(lambda i: i.pop("title")), r"index.json:1: the file needs 'title'"),
]


@pytest.mark.parametrize(
    "index,expected", BAD_INDEX, ids=["timeout-type", "typo", "missing-text", "no-title"]
)
def test_bad_index_json_is_one_line_with_file_and_line(tmp_path: Path, index: dict, expected: str):
    folder = make_lab(tmp_path, index=index)
    done = awsview("dump", "--lab", str(folder), "--endpoint-url", "http://127.0.0.1:9")
    assert done.returncode == 2
    assert re.search(expected, one_line(done.stderr))


@pytest.mark.parametrize("name", ["index.json", "awsview.toml"])
def test_a_lab_file_of_gigabytes_is_one_line_not_read_whole(tmp_path: Path, name: str):
    """A crafted lab: its settings a sparse file of 3 GiB (no disk used). Read whole, it took
    3 GiB of memory and ended on a MemoryError; it is refused after its first mebibyte."""
    folder = make_lab(tmp_path)
    os.truncate(folder / name, 3 << 30)
    done = awsview("dump", "--lab", str(folder), "--endpoint-url", "http://127.0.0.1:9")
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        f"awsview: {folder / name}: more than 1 MiB, far more than such a file holds"
    )


def test_a_step_text_of_gigabytes_stops_the_check_with_one_line(
    tmp_path: Path, emulator: RunningEmulator
):
    folder = make_lab(tmp_path)
    os.truncate(folder / "step1.md", 3 << 30)
    done = awsview("lab", "check", str(folder), "--endpoint-url", emulator.endpoint_url)
    assert done.returncode == 2
    assert "far more than such a file holds" in one_line(done.stderr)
    assert "Traceback" not in done.stderr


def test_a_script_that_prints_without_end_is_read_back_by_its_last_mebibyte(tmp_path: Path):
    from awsview.labs.script import OUTPUT_KEPT, Workspace
    from awsview.labspec.folder import load_folder

    folder, _ = load_folder(make_lab(tmp_path))
    workspace = Workspace(folder, "http://127.0.0.1:9", "us-east-1", isolated=True)
    try:
        outcome = workspace.run("head -c 5000000 /dev/zero | tr '\\0' x; echo; echo last", "t", 60)
    finally:
        workspace.close()
    assert outcome.ok
    first, rest = outcome.output.split("\n", 1)
    assert first == f"({5_000_006 - OUTPUT_KEPT} bytes of output before this left out)"
    assert len(rest) == OUTPUT_KEPT and rest.endswith("x\nlast\n")


def test_a_folder_with_no_index_json_is_refused(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    done = awsview("lab", "check", str(tmp_path / "empty"))
    assert done.returncode == 2
    assert (
        one_line(done.stderr)
        == f"awsview: {tmp_path / 'empty'}: not a lab folder: it has no index.json"
    )


# --- where labs are found ---------------------------------------------------------------


def test_labs_are_found_in_awsview_labs_then_xdg_then_built_in(tmp_path: Path):
    first, second, data = tmp_path / "first", tmp_path / "second", tmp_path / "data"
    make_lab(first, "tlab")
    make_lab(second, "tlab", index=_index_with(lambda i: i.update(title="Shadowed")))
    make_lab(second, "other")
    make_lab(data / "awsview" / "labs", "ev04", index=_index_with(lambda i: i.update(title="Mine")))
    env = {"AWSVIEW_LABS": f"{first}{os.pathsep}{second}", "XDG_DATA_HOME": str(data)}
    listed = awsview("lab", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[0]: line for line in listed.stdout.splitlines()}
    assert lines["tlab"].endswith(f"[AWSVIEW_LABS: {first / 'tlab'}]")
    assert "Queue For Jobs" in lines["tlab"]
    assert lines["other"].endswith(f"[AWSVIEW_LABS: {second / 'other'}]")
    assert lines["ev04"].endswith(f"[XDG_DATA_HOME: {data / 'awsview' / 'labs' / 'ev04'}]")
    assert "Mine" in lines["ev04"]
    assert lines["q05"].endswith(f"[built-in: {BUILTIN / 'q05'}]")
    alone = awsview("lab", "list", env={"XDG_DATA_HOME": str(tmp_path / "none")})
    assert f"[built-in: {BUILTIN / 'ev04'}]" in alone.stdout


def test_a_lab_folders_own_strings_reach_the_terminal_without_escapes(tmp_path: Path):
    hostile = "Jobs \x1b]0;owned\x07\x1b[31m[red]red[/red]\x9b2J"
    make_lab(tmp_path, "tlab", index=_index_with(lambda i: i.update(title=hostile)))
    listed = awsview("lab", "list", env={"AWSVIEW_LABS": str(tmp_path)})
    line = next(line for line in listed.stdout.splitlines() if line.startswith("tlab"))
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", line)
    assert "[red]red[/red]" in line  # as written: nothing interprets it


# --- lab check on small labs --------------------------------------------------------------


def test_lab_check_runs_the_step_the_verify_script_and_a_jmespath_checkpoint(
    tmp_path: Path, emulator: RunningEmulator
):
    folder = make_lab(tmp_path)
    junit = tmp_path / "report.xml"
    done = awsview(
        "lab", "check", str(folder), "--endpoint-url", emulator.endpoint_url, "--junit", str(junit)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ verify1-1.sh Queue Exists" in done.stdout
    assert '✓ checkpoint: the jobs queue exists — NOW ["labex-t-jobs"]' in done.stdout
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    assert [c.get("name") for c in cases] == [
        "commands",
        "verify1-1.sh Queue Exists",
        "checkpoint: the jobs queue exists",
    ]


def test_a_checkpoint_that_does_not_hold_fails_the_step_with_what_is_there(
    tmp_path: Path, emulator: RunningEmulator
):
    step = "```bash\naws sqs create-queue --queue-name labex-t-other\n```\n"
    own = OWN.replace("?name=='labex-t-jobs'", "?name=='labex-t-missing'")
    folder = make_lab(tmp_path, step=step, verify="true\n", own=own)
    done = awsview(  # a checkpoint that cannot hold: --settle keeps its wait short
        "lab", "check", str(folder), "--endpoint-url", emulator.endpoint_url, "--settle", "2"
    )
    assert done.returncode == 1
    (line,) = [line for line in done.stdout.splitlines() if "checkpoint:" in line]
    assert line.startswith("  ✗ checkpoint: the jobs queue exists — NOW [")
    assert '"labex-t-other"' in line  # what is there, not the name looked for
    assert one_line(done.stderr) == "awsview: tlab step 1/1 queue (run 1) failed its checks"


def test_a_hanging_verify_script_fails_at_its_timeout(tmp_path: Path, emulator: RunningEmulator):
    index = _index_with(lambda i: i["details"]["steps"][0]["verify"][0].update(timeout=1))
    folder = make_lab(tmp_path, index=index, verify="sleep 600\n")
    done = awsview("lab", "check", str(folder), "--endpoint-url", emulator.endpoint_url)
    assert done.returncode == 1
    assert "✗ verify1-1.sh Queue Exists — create it (timed out after 1 s)" in done.stdout
    assert one_line(done.stderr) == "awsview: tlab step 1/1 queue (run 1) failed its checks"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_play_stopped_by_kill_or_a_closed_terminal_stops_its_step_and_leaves_nothing(
    tmp_path: Path, emulator: RunningEmulator, stop: signal.Signals
):
    """`kill`, or the terminal closing, stops `lab play` as Ctrl+C does: the step's script, in a
    session of its own where neither signal reaches it, is stopped rather than left to go on
    creating resources, and the scripts folder goes with it. The status is the signal's."""
    started = tmp_path / "started"
    step = STEP.replace(
        "aws sqs create-queue", f"touch {started}; sleep 60; aws sqs create-queue", 1
    )
    folder = make_lab(tmp_path, step=step)
    scratch = tmp_path / "scratch"  # the play's TMPDIR: its scripts folder and nothing else
    scratch.mkdir()
    # A process of its own, not the helper's fork: the test signals it while it runs.
    play = subprocess.Popen(
        [sys.executable, "-m", "awsview", "lab", "play", str(folder)]
        + ["--endpoint-url", emulator.endpoint_url],
        env={**os.environ, "TMPDIR": str(scratch)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: started.exists() or play.poll() is not None, timeout=60)
        assert play.poll() is None, play.communicate()
        assert any(scratch.iterdir())
        play.send_signal(stop)
        _, stderr = play.communicate(timeout=20)
    finally:
        play.kill()
    assert play.returncode == 128 + stop, stderr
    assert "Traceback" not in stderr
    assert list(scratch.iterdir()) == []
    assert [p.args for p in live_processes() if str(scratch) in p.args] == []


def test_a_stop_that_lands_as_a_step_script_starts_stops_the_script(
    starts_processes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Ctrl+C (SIGTERM and SIGHUP are turned into it) can land while a step's bash is being
    started: on a busy machine the script already runs, in a session of its own, before
    `subprocess.Popen` returns. It is stopped all the same, not left running with nothing that
    knows it (seen as a SIGTERM test whose play ended while its step's `sleep` held its output)."""
    from awsview.labs import script
    from awsview.labspec.folder import builtin_dir, load_folder

    pidfile = tmp_path / "pid"
    real_popen = subprocess.Popen

    def popen_then_ctrl_c(*args, **kwargs):
        process = real_popen(*args, **kwargs)
        wait_for(pidfile.exists, timeout=30)  # the script runs
        os.kill(os.getpid(), signal.SIGINT)  # and Ctrl+C lands before Popen has returned
        return process

    folder, _ = load_folder(builtin_dir() / "dlq")  # any lab folder: a workspace to run in
    workspace = script.Workspace(folder, "http://127.0.0.1:9", "us-east-1", True)
    monkeypatch.setattr(script.subprocess, "Popen", popen_then_ctrl_c)
    # Ctrl+C as in a terminal: a run started in the background of a script inherits it ignored.
    ctrl_c = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            workspace.run(f"echo $$ > {pidfile}; sleep 60", "step", timeout=120)
    finally:
        signal.signal(signal.SIGINT, ctrl_c)
        monkeypatch.undo()
        workspace.close()
    pid = int(pidfile.read_text())
    wait_for(lambda: all(p.pid != pid for p in live_processes()), timeout=10)


def test_a_tmpdir_too_long_for_a_socket_plays_with_the_real_aws(
    tmp_path: Path, emulator: RunningEmulator
):
    """The fork server of `aws` listens on a socket in TMPDIR, whose path has a limit (108 bytes
    on Linux): with a longer TMPDIR the lab plays with the real program instead of failing."""
    folder = make_lab(tmp_path)
    long = tmp_path / ("t" * 100)
    long.mkdir()
    no_lent_server = {fastcli.SOCKET_ENV: "", fastcli.PROGRAMS_SOCKET_ENV: ""}
    done = awsview(
        "lab",
        "play",
        str(folder),
        "--endpoint-url",
        emulator.endpoint_url,
        env={"TMPDIR": str(long), **no_lent_server},
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert list(long.iterdir()) == []


def test_a_failing_step_command_stops_the_check_and_says_which(
    tmp_path: Path, emulator: RunningEmulator
):
    step = (
        "```bash\necho starting\n"
        "aws dynamodb describe-table --table-name labex-t-none\necho never\n```\n"
    )
    folder = make_lab(tmp_path, step=step)
    done = awsview("lab", "check", str(folder), "--endpoint-url", emulator.endpoint_url)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert re.match(  # the AWS CLI's status for a service error: 254 (v2) or 255 (v1)
        r"awsview: tlab step 1/1 queue \(run 1\): "
        r"`aws dynamodb describe-table --table-name labex-t-none` failed \(exit 25[45]\)",
        line,
    ), line
    assert "ResourceNotFoundException" in line
    assert "never" not in done.stdout


def test_transcript_blocks_run_only_their_prompted_lines(tmp_path: Path, emulator: RunningEmulator):
    step = (
        "```console\n$ aws sqs create-queue \\\n    --queue-name labex-t-jobs\n"
        '{\n    "QueueUrl": "http://127.0.0.1:5000/000000000000/labex-t-jobs"\n}\n```\n'
        "```bash norun\nexit 1\n```\n"
    )
    folder = make_lab(tmp_path, step=step)
    done = awsview("lab", "check", str(folder), "--endpoint-url", emulator.endpoint_url)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_lab_folder_never_plays_on_a_real_account_unless_told(tmp_path: Path):
    index = _index_with(lambda i: i["details"]["intro"].update(background="setup.sh"))
    folder = make_lab(tmp_path, index=index)
    (folder / "setup.sh").write_text(f"touch {tmp_path / 'touched'}\n")
    keys = {
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "not-a-real-secret",
        "AWS_REGION": "us-east-1",
    }
    for action in ("play", "check"):
        done = awsview(
            "lab",
            action,
            str(folder),
            "--endpoint-url",
            "https://sqs.us-east-1.amazonaws.com",
            env=keys,
        )
        assert done.returncode == 2
        assert (
            "not a local endpoint (loopback or an AWS View emulator): pass --real-account"
            in one_line(done.stderr)
        )
    assert not (tmp_path / "touched").exists()


# --- ev04, the built-in lab folder -----------------------------------------------------------


def test_verify_answers_with_the_checkpoints_of_a_step(tmp_path: Path, emulator: RunningEmulator):
    copy = tmp_path / "anywhere" / "ev04"
    shutil.copytree(BUILTIN / "ev04", copy)  # a lab folder copied anywhere is played by path
    played = awsview(
        "lab", "play", str(copy), "--until", "workflow", "--endpoint-url", emulator.endpoint_url
    )
    assert played.returncode == 0, played.stdout + played.stderr
    where = ("--endpoint-url", emulator.endpoint_url, "--lab", str(copy))
    done = awsview("verify", "2", *where)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ state machine labex-ev04-orders with Retry and Catch" in done.stdout
    later = awsview("verify", "executions", *where)
    assert later.returncode == 1
    assert (
        "✗ retry-order SUCCEEDED after 1 TaskFailed, order 2/600 — NOW no execution retry-order yet"
        in later.stdout
    )
    wrong = awsview("verify", "9", *where)
    assert wrong.returncode == 2
    assert one_line(wrong.stderr) == "awsview: lab ev04 has no step '9'"


def test_lab_check_of_ev04_passes_twice(tmp_path: Path):
    junit = tmp_path / "ev04.xml"
    done = awsview("lab", "check", "ev04", "--twice", "--junit", str(junit), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ev04 run 2" in done.stdout
    assert done.stdout.count("✓ checkpoint: reference unchanged") == 2
    root = ElementTree.parse(junit).getroot()
    assert not list(root.iter("failure"))
    assert {s.get("name") for s in root.iter("testsuite")} >= {"ev04.run2.step4"}
