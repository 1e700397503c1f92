"""A lab folder's commands run as a learner runs them: in ``bash``, with the AWS CLI, in the lab's
home directory on the VM, against an endpoint.

Which commands a step runs: ``solutionN.sh`` beside ``stepN.md`` when there is one; otherwise
the runnable fenced blocks of ``stepN.md``, in order, as one script. A block is runnable when
its info string starts with ``bash``, ``sh``, ``shell`` or ``console`` and does not say
``norun`` (```` ```bash norun ````); a block written as a transcript (a line starting with
``$ ``) runs only its ``$ `` lines and their continuations (a line after one ending in ``\\``,
or starting with ``> ``); the other lines are output.

The folder's files reach the commands as on the VM: ``index.json``'s assets are copied to their
targets under a scratch ``HOME`` (``~/project``), and the endpoint the lab hard-codes
(``awsview.toml``'s ``endpoint``, by default ``http://127.0.0.1:5000``) is replaced by the one
played on, in the scripts and in the copied text files, so a lab works on any port.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from awsview.labs import fastcli
from awsview.labspec.folder import LabFolder, LabStep
from awsview.model.textfile import read_utf8

RUNNABLE = ("bash", "sh", "shell", "console")
STEP_TIMEOUT = 600.0  # seconds a step's commands may take
VERIFY_TIMEOUT = 30.0  # a verify script whose timeout is 0 (the platform's default)
SAID = 400  # characters of a command's output said in a failure
OUTPUT_KEPT = 1 << 20  # bytes of a script's output read back: its last mebibyte
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|\x1b\[[0-9;?]*[ -/]*[@-~]")


def runnable_blocks(markdown: str) -> list[str]:
    """The commands of a step text's runnable fenced blocks, by the rules of the docstring."""
    blocks: list[str] = []
    fence: str | None = None
    info, body = "", []
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence is None:
            opened = re.match(r"(`{3,}|~{3,})\s*(.*)$", stripped)
            if opened:
                fence, info, body = opened.group(1), opened.group(2), []
            continue
        if stripped.startswith(fence) and not stripped[len(fence) :].strip():
            words = info.split()
            if words and words[0].lower() in RUNNABLE and "norun" not in words[1:]:
                blocks.append(_commands(body))
            fence = None
            continue
        body.append(line)
    return [b for b in blocks if b.strip()]


def _commands(lines: list[str]) -> str:
    if not any(line.startswith("$ ") or line == "$" for line in lines):
        return "\n".join(lines)
    kept, going = [], False
    for line in lines:
        if line.startswith("$ "):
            kept.append(line[2:])
        elif going or line.startswith("> "):
            kept.append(line[2:] if line.startswith("> ") else line)
        else:
            continue
        going = kept[-1].endswith("\\")
    return "\n".join(kept)


def step_commands(folder: LabFolder, step: LabStep) -> tuple[str, str]:
    """(the step's commands, where they come from)."""
    solution = folder.path / f"solution{step.number}.sh"
    if solution.is_file():
        return read_utf8(solution), solution.name
    text = read_utf8(folder.path / step.text)
    return "\n\n".join(runnable_blocks(text)), f"{step.text} (its bash blocks)"


def clean(text: str, limit: int = SAID) -> str:
    """One line of a command's output fit to say: no escapes, no control characters, bounded."""
    said = " ".join(_CONTROL.sub("", text).split())
    return said if len(said) <= limit else "…" + said[-limit:]


@dataclass
class Outcome:
    ok: bool
    status: int | None  # None: killed at its timeout
    output: str  # stdout and stderr, as printed
    failed_command: str = ""
    seconds: float = 0.0
    timeout: float = 0.0

    def said(self) -> str:
        if self.status is None:
            return f"timed out after {self.timeout:g} s"
        if self.failed_command:
            return f"`{clean(self.failed_command, 160)}` failed (exit {self.status})" + (
                f": {clean(self.output.strip().splitlines()[-1])}" if self.output.strip() else ""
            )
        last = self.output.strip().splitlines()[-1] if self.output.strip() else ""
        return f"exit {self.status}" + (f": {clean(last)}" if last else "")


_OPEN: set[Path] = set()  # the scratch homes of this process's workspaces not yet closed


def forget_all() -> None:
    """Remove every scratch home this process made and has not closed, and stop its fork
    servers: for a process that ends without its usual cleanup (`os._exit` when its terminal
    is gone: awsview.ui.lifeline), which must leave nothing of them behind."""
    while _OPEN:
        shutil.rmtree(_OPEN.pop(), ignore_errors=True)
    fastcli.stop_servers()


class Workspace:
    """The VM of one play: a scratch home with the lab's assets, and the environment every
    command of the lab gets. ``served``: programs besides ``aws`` the lab's commands hand the
    fork server, by the name they are run by (`lab check` has ``awsview verify`` served)."""

    def __init__(
        self,
        folder: LabFolder,
        endpoint_url: str,
        region: str,
        isolated: bool,
        local: bool = True,
        served: Mapping[str, fastcli.Served] | None = None,
    ):
        self.folder = folder
        self.endpoint_url = endpoint_url.rstrip("/")
        self.root = Path(tempfile.mkdtemp(prefix=f"awsview-lab-{folder.name}-"))
        _OPEN.add(self.root)
        self.home = self.root / "home"
        (self.home / "project").mkdir(parents=True)
        self.env = self._environment(region, isolated, local, served or {})
        self._copy_assets()

    def close(self) -> None:
        _OPEN.discard(self.root)
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def cwd(self) -> Path:
        return self.home / "project"

    def rewrite(self, text: str) -> str:
        """The lab's hard-coded endpoint made the one played on (on AWS itself, with no
        endpoint, the text stays as the lab wrote it)."""
        wrote, real = urlsplit(self.folder.endpoint), urlsplit(self.endpoint_url)
        if not real.netloc or not wrote.netloc or wrote.netloc == real.netloc:
            return text
        return text.replace(self.folder.endpoint, self.endpoint_url).replace(
            wrote.netloc, real.netloc
        )

    def _environment(
        self, region: str, isolated: bool, local: bool, served: Mapping[str, fastcli.Served]
    ) -> dict[str, str]:
        # The shell's locale and stream settings too: the lab's commands print as they say (and
        # as a fork server's child started from this process prints: fastcli.STDIO).
        keep = ("PATH", "TERM", "TMPDIR", "TZ", *fastcli.STDIO)
        env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("AWS_")}
        if isolated:  # an emulator this command owns: never a real account's configuration
            env = {k: v for k, v in env.items() if not k.startswith("AWS_")}
            env.update(
                AWS_ACCESS_KEY_ID="testing",
                AWS_SECRET_ACCESS_KEY="testing",
                AWS_CONFIG_FILE=os.devnull,
                AWS_SHARED_CREDENTIALS_FILE=os.devnull,
            )
        elif local:  # an emulator answers any keys; the shell's are kept if it has some
            env.setdefault("AWS_ACCESS_KEY_ID", "testing")
            env.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        else:  # the learner's own files, though HOME moves
            real_home = Path.home() / ".aws"
            env.setdefault("AWS_CONFIG_FILE", str(real_home / "config"))
            env.setdefault("AWS_SHARED_CREDENTIALS_FILE", str(real_home / "credentials"))
        bindir = str(Path(sys.executable).parent)  # the `awsview` that plays is the one found
        env.update(
            HOME=str(self.home),
            AWS_DEFAULT_REGION=region,
            AWS_REGION=region,
            AWS_PAGER="",
            AWSVIEW_LAB=str(self.folder.path.resolve()),
            PATH=os.pathsep.join([bindir, env.get("PATH", os.defpath)]),
        )
        if self.endpoint_url:  # none: AWS itself, as the SDK resolves it
            env["AWS_ENDPOINT_URL"] = self.endpoint_url
            self._pin_endpoint(env, served)
        return env

    def _pin_endpoint(self, env: dict[str, str], served: Mapping[str, fastcli.Served]) -> None:
        """AWS CLI v1 sends a few services (SQS in us-east-1) to their legacy host whatever
        AWS_ENDPOINT_URL says; an ``aws`` first on PATH gives each command the endpoint
        explicitly, and hands it to the fork server when it can (awsview.labs.fastcli), as does
        the program of each name in ``served`` for the commands it names."""
        real = shutil.which("aws", path=env["PATH"])
        if real is None:
            return  # the commands say "aws: command not found", as on a VM without it
        bindir = self.root / "bin"
        bindir.mkdir(exist_ok=True)
        aws = _fork_server("aws") if fastcli.usable(real) else None
        if aws is not None:
            fastcli.write_client(bindir / "aws", real)
            env[fastcli.SOCKET_ENV] = aws
            for name, program in served.items():
                found = shutil.which(name, path=env["PATH"])
                if found is None or not fastcli.usable(found, program):
                    continue
                programs = _fork_server("programs")
                if programs is not None:
                    fastcli.write_client(bindir / name, found, program)
                    env[fastcli.PROGRAMS_SOCKET_ENV] = programs
        else:
            shim = bindir / "aws"
            shim.write_text(
                f'#!/bin/sh\nexec {shlex.quote(real)} --endpoint-url "$AWS_ENDPOINT_URL" "$@"\n',
                encoding="utf-8",
            )
            shim.chmod(0o755)
        env["PATH"] = os.pathsep.join([str(bindir), env["PATH"]])

    def _copy_assets(self) -> None:
        source = self.folder.path / "assets"
        for asset in self.folder.assets:
            target = Path(asset.target.replace("~", str(self.home), 1))
            target.mkdir(parents=True, exist_ok=True)
            matches = sorted(source.glob(asset.file)) if source.is_dir() else []
            if not matches:
                raise FileNotFoundError(f"{asset.file} is not in {source}")
            for found in matches:
                placed = target / found.name
                if found.is_dir():
                    shutil.copytree(found, placed, dirs_exist_ok=True)
                    continue
                data = found.read_bytes()
                try:
                    placed.write_text(self.rewrite(data.decode("utf-8")), encoding="utf-8")
                except UnicodeDecodeError:
                    placed.write_bytes(data)
                if asset.chmod:
                    os.chmod(placed, int(asset.chmod, 8))

    def run(
        self, commands: str, name: str, timeout: float, stream: bool = False, strict: bool = True
    ) -> Outcome:
        """``commands`` in bash in the lab's home; ``strict`` stops at the first command that
        fails (and says it); killed with everything it started after ``timeout`` seconds."""
        script = self.root / "scripts" / name
        script.parent.mkdir(exist_ok=True)
        script.write_text(self.rewrite(commands), encoding="utf-8")
        failed = self.root / "scripts" / f"{name}.failed"
        failed.unlink(missing_ok=True)
        if strict:
            wrapper = (
                "set -eE -o pipefail\n"
                f"trap 'printf %s \"$BASH_COMMAND\" > {shlex.quote(str(failed))}' ERR\n"
                f"source {shlex.quote(str(script))}\n"
            )
            argv = ["bash", "-c", wrapper, name]
        else:
            argv = ["bash", str(script)]
        started = time.monotonic()
        output_file = self.root / "scripts" / f"{name}.out"
        with output_file.open("w+b") as out:
            with _StopsHeld() as held:
                process = subprocess.Popen(
                    argv,
                    cwd=self.cwd,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=None if stream else out,
                    stderr=None if stream else subprocess.STDOUT,
                    start_new_session=True,  # its whole group is stopped at the timeout
                )
            try:
                held.deliver()  # one that came as it started: now, with the script to stop
                status: int | None = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _stop(process)
                status = None
            except BaseException:  # Ctrl+C: its own session does not get the terminal's signal
                _stop(process)
                raise
            size = out.seek(0, os.SEEK_END)
            out.seek(max(0, size - OUTPUT_KEPT))  # a script that prints without end: its last part
            output = out.read().decode("utf-8", "replace")
            if size > OUTPUT_KEPT:
                output = f"({size - OUTPUT_KEPT} bytes of output before this left out)\n{output}"
        command = failed.read_text(encoding="utf-8") if failed.is_file() else ""
        return Outcome(status == 0, status, output, command, time.monotonic() - started, timeout)

    def script(self, relative: str) -> str:
        return read_utf8(self.folder.path / relative)


# What stops a command as Ctrl+C does (awsview.cli.main turns SIGTERM and SIGHUP into it).
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _StopsHeld:
    """Holds the signals that stop a command while a script starts, for `deliver` to raise once
    the script can be stopped with it. A stop raised inside `subprocess.Popen` (the child already
    running, as it can be on a busy machine before Popen returns) would leave the script, in a
    session of its own, running on with nothing to stop it."""

    def __init__(self) -> None:
        self.held: list[int] = []
        self._previous: dict[int, object] = {}

    def __enter__(self) -> _StopsHeld:
        if threading.current_thread() is threading.main_thread():  # where handlers run
            for sig in STOPPING:
                self._previous[sig] = signal.signal(sig, lambda signum, _: self.held.append(signum))
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(sig, handler)  # type: ignore[arg-type]

    def deliver(self) -> None:
        if self.held:
            signal.raise_signal(self.held[0])


def _stop(process: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def _fork_server(kind: str) -> str | None:
    """The socket of this process's fork server of ``kind``, or None where it cannot be started
    (a TMPDIR too long for a socket's path, no room for its folder): the real program runs."""
    try:
        return fastcli.server(kind).socket_path
    except OSError:
        return None
