"""Runs uploaded Python Lambda code locally, in warm worker processes, without Docker.

One pool of workers per function version and code: a worker imports the handler once (the cold
start) and then serves invocations one at a time, so a warm invocation costs milliseconds. What
the handler prints lands in ``/aws/lambda/<name>`` between START / END / REPORT lines, as on AWS.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from awsview.emulator.journal import Invocation, Journal
from awsview.emulator.trust import INTERNAL_KEY

log = logging.getLogger(__name__)

BOOTSTRAP = Path(__file__).with_name("_bootstrap.py")
ZYGOTE = Path(__file__).with_name("_zygote.py")
MAX_WORKERS_PER_VERSION = 8
ZYGOTE_START_S = 60.0  # its imports, on a very busy machine
ZYGOTE_ANSWER_S = 30.0  # a fork, on a very busy machine
ZYGOTE_MAX_REQUEST = 1 << 20  # as _zygote.MAX_REQUEST


@dataclass(frozen=True)
class InvocationResult:
    request_id: str
    payload: bytes
    function_error: str | None  # "Unhandled" when the handler raised, as AWS reports it
    error_type: str | None
    log_tail: str
    duration_ms: float
    init_ms: float | None


@dataclass(frozen=True)
class FunctionSpec:
    """What the runtime needs to know of a moto LambdaFunction."""

    name: str
    arn: str
    version: str
    runtime: str
    handler: str
    timeout: float
    memory_mb: int
    environment: tuple[tuple[str, str], ...]
    code: bytes
    code_sha256: str
    account_id: str
    region: str

    @classmethod
    def of(cls, fn: Any) -> FunctionSpec:
        return cls(
            name=fn.function_name,
            arn=fn.function_arn,
            version=str(fn.version),
            runtime=fn.run_time or "",
            handler=fn.handler or "",
            timeout=float(fn.timeout or 3),
            memory_mb=int(fn.memory_size or 128),
            environment=tuple(sorted((fn.environment_vars or {}).items())),
            code=fn.code_bytes or b"",
            code_sha256=fn.code_sha_256 or "",
            account_id=fn.account_id,
            region=fn.region,
        )

    @property
    def pool_key(self) -> tuple:
        return (
            self.arn,
            self.version,
            self.code_sha256,
            self.handler,
            self.environment,
            self.memory_mb,
            self.runtime,
        )


class _Forked:
    """A worker the zygote forked, used as a worker's ``subprocess.Popen`` is: ``pid``,
    ``stdin``, ``stdout``, ``poll``, ``kill``, ``wait``. The zygote reaps it; its pidfd says when
    it has ended (its exit status is the zygote's to know: 1 here)."""

    def __init__(self, pid: int, pidfd: int, stdin: Any, stdout: Any) -> None:
        self.pid, self._pidfd = pid, pidfd
        self.stdin, self.stdout = stdin, stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and _readable(self._pidfd, 0.0):
            self._ended()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def wait(self) -> int:
        if self.returncode is None:
            _readable(self._pidfd, None)
            self._ended()
        assert self.returncode is not None
        return self.returncode

    def _ended(self) -> None:
        self.returncode = 1
        os.close(self._pidfd)

    def __del__(self) -> None:
        if self.returncode is None:
            os.close(self._pidfd)


class _Zygote:
    """The process the workers are forked from (awsview/emulator/_zygote.py): it has imported
    boto3 once, so a cold start does not. Started by the first cold start, which waits for it
    (about what a fresh interpreter's imports would have taken). ``spawn`` answers None whenever
    it cannot be used (not on Linux, gone, not ready in ZYGOTE_START_S, or the function bundles
    a package it preloaded): that worker is then a fresh interpreter, as every worker was
    before."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._hello = b""
        self.preloaded: tuple[str, ...] | None = None  # None: not ready yet
        self.broken = not hasattr(os, "pidfd_open")

    def spawn(self, env: dict[str, str], cwd: Path) -> _Forked | None:
        with self._lock:
            if self.broken or not self._ready(ZYGOTE_START_S):
                return None
            assert self._sock is not None and self.preloaded is not None
            if any(_bundles(cwd, name) for name in self.preloaded):
                return None  # its own copy must win, as on AWS
            request = json.dumps({"env": env, "cwd": str(cwd)}).encode() + b"\n"
            if len(request) > ZYGOTE_MAX_REQUEST:
                return None  # more than a function's environment can hold on AWS: not its to read
            stdin_r, stdin_w = os.pipe()
            stdout_r, stdout_w = os.pipe()
            try:
                socket.send_fds(self._sock, [request], [stdin_r, stdout_w])
                answer, fds = self._answer()
            except (OSError, ValueError):
                self._stop()
                answer, fds = -1, []
            finally:
                os.close(stdin_r)
                os.close(stdout_w)
            if answer < 0 or len(fds) != 1:
                for fd in (stdin_w, stdout_r, *fds):
                    os.close(fd)
                return None
            return _Forked(answer, fds[0], open(stdin_w, "wb", 0), open(stdout_r, "rb", 0))

    def pending(self) -> bool:
        """Whether a spawn now would wait for the zygote's start (which this begins)."""
        with self._lock:
            return not self.broken and not self._ready(0.0)

    def _ready(self, wait: float) -> bool:
        """Whether the zygote has said hello, waiting up to ``wait`` seconds for it (started on
        the first call)."""
        if self._sock is None:
            self._start()
        if self.broken or self.preloaded is not None:
            return not self.broken
        assert self._sock is not None
        deadline = time.monotonic() + wait
        try:
            while _readable(self._sock.fileno(), max(0.0, deadline - time.monotonic())):
                chunk = self._sock.recv(65536)
                if not chunk:
                    raise OSError("the zygote ended as it started")
                self._hello += chunk
                if self._hello.endswith(b"\n"):
                    self.preloaded = tuple(json.loads(self._hello)["preloaded"])
                    return True
                if len(self._hello) > ZYGOTE_MAX_REQUEST:
                    raise ValueError("not a hello")
            if wait > 0:
                raise OSError("the zygote did not start in time")  # no cold start waits again
        except (OSError, ValueError, KeyError, TypeError):
            self._stop()
        return False

    def _answer(self) -> tuple[int, list[int]]:
        assert self._sock is not None
        data, fds = b"", []
        while not data.endswith(b"\n"):
            chunk, more, _, _ = socket.recv_fds(self._sock, 64, 1)
            fds += more
            if not chunk:
                raise OSError("the zygote went away")
            data += chunk
        return int(data), fds

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        # Its imports never see the emulator's settings; each worker gets its own environment.
        env = _without_emulator_settings()
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        try:
            self._proc = subprocess.Popen(
                [sys.executable, str(ZYGOTE), str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            ours.close()
            self.broken = True
            return
        finally:
            theirs.close()
        ours.settimeout(ZYGOTE_ANSWER_S)  # a fork is quick; a zygote that does not answer is
        self._sock = ours  # given up on

    def _stop(self) -> None:
        """Never again for this emulator: its workers start as fresh interpreters."""
        self.broken = True
        if self._sock is not None:
            self._sock.close()  # the zygote ends at its socket's end
            self._sock = None
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()

    def close(self) -> None:
        with self._lock:
            self._stop()


def _without_emulator_settings() -> dict[str, str]:
    """The emulator's environment less its AWS and moto settings: what a worker (and the
    zygote) starts from, never the emulator's own credentials or endpoints."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_"))}


def _readable(fd: int, timeout: float | None) -> bool:
    """Whether ``fd`` is readable (a pidfd: its process ended) within ``timeout`` seconds (None:
    however long). poll, not select: an emulator serving many connections has fds past 1024."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(None if timeout is None else int(timeout * 1000)))


def _bundles(code_dir: Path, package: str) -> bool:
    """Whether a function's code brings its own copy of ``package`` (a folder or a module)."""
    return (code_dir / package).is_dir() or (code_dir / f"{package}.py").is_file()


class _Worker:
    """One warm process of one function version."""

    def __init__(
        self, spec: FunctionSpec, code_dir: Path, endpoint_url: str, zygote: _Zygote | None = None
    ):
        self.spec = spec
        self.log_stream = f"{datetime.now(UTC):%Y/%m/%d}/[{spec.version}]{uuid.uuid4().hex}"
        env = _without_emulator_settings()
        env.update(dict(spec.environment))
        env.update(
            {
                "AWS_ENDPOINT_URL": endpoint_url,
                "AWS_REGION": spec.region,
                "AWS_DEFAULT_REGION": spec.region,
                "AWS_ACCESS_KEY_ID": "ASIAAWSVIEWEMULATOR",
                "AWS_SECRET_ACCESS_KEY": "emulator-session-secret",
                # How the emulator knows its own Lambda code when it asks for a token.
                "AWS_SESSION_TOKEN": INTERNAL_KEY,
                "AWS_LAMBDA_FUNCTION_NAME": spec.name,
                "AWS_LAMBDA_FUNCTION_VERSION": spec.version,
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
                "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
                "AWS_LAMBDA_LOG_STREAM_NAME": self.log_stream,
                "AWS_EXECUTION_ENV": f"AWS_Lambda_{spec.runtime}",
                "LAMBDA_TASK_ROOT": str(code_dir),
                "_HANDLER": spec.handler,
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONUNBUFFERED": "1",
            }
        )
        forked = zygote.spawn(env, code_dir) if zygote is not None else None
        self.proc: subprocess.Popen[bytes] | _Forked = forked or subprocess.Popen(
            [sys.executable, str(BOOTSTRAP)],
            cwd=code_dir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self._buffer = b""
        self.hello: dict[str, Any] | None = None
        self.cold = True

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_line(self, deadline: float) -> dict[str, Any] | None:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if not _readable(fd, remaining):
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError("worker exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def wait_ready(self, timeout: float) -> dict[str, Any] | None:
        if self.hello is None:
            self.hello = self._read_line(time.monotonic() + timeout)
        return self.hello

    def invoke(
        self, payload: str, context: dict[str, Any], timeout: float
    ) -> dict[str, Any] | None:
        request = {"payload": payload, "context": context, "timeout_s": timeout}
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        return self._read_line(time.monotonic() + timeout)

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            pipe.close()


LogSink = Callable[[FunctionSpec, str, list[str]], None]


class LambdaRuntime:
    """Invokes functions in warm pools; records each invocation in the journal."""

    def __init__(self, state_dir: Path, endpoint_url: str, journal: Journal, log_sink: LogSink):
        self.code_root = Path(state_dir) / "lambda-code"
        self.endpoint_url = endpoint_url
        self.journal = journal
        self.log_sink = log_sink
        self._lock = threading.Lock()
        self._idle: dict[tuple, list[_Worker]] = {}
        self._busy: dict[tuple, int] = {}
        self._cond = threading.Condition(self._lock)
        self._zygote = _Zygote()
        self._retired: dict[str, int] = {}  # arn → how often its workers were retired

    def close(self) -> None:
        with self._lock:
            workers = [w for pool in self._idle.values() for w in pool]
            self._idle.clear()
        for worker in workers:
            worker.kill()
        self._zygote.close()

    def _code_dir(self, spec: FunctionSpec) -> Path:
        digest = hashlib.sha256(spec.code).hexdigest()
        target = self.code_root / digest
        if not target.exists():
            tmp = self.code_root / f".{digest}.{uuid.uuid4().hex}"
            tmp.mkdir(parents=True)
            try:
                with zipfile.ZipFile(io.BytesIO(spec.code)) as archive:
                    archive.extractall(tmp)
            except zipfile.BadZipFile:
                pass  # an empty directory: the import fails the way AWS reports it
            try:
                tmp.rename(target)
            except OSError:  # another thread extracted it first
                pass
        return target

    def prewarm(self, spec: FunctionSpec) -> None:
        """Start one worker for a freshly uploaded version; it imports the code while idle. The
        API call that uploaded it does not wait for the zygote's start: that worker is started
        on a thread of its own then."""
        if not spec.runtime.startswith("python"):
            return
        if not self._zygote.pending():
            self._release(spec.pool_key, self._spawn(spec), took=False)
            return
        with self._lock:
            generation = self._retired.get(spec.arn, 0)

        def later() -> None:
            worker = self._spawn(spec)
            with self._lock:
                current = self._retired.get(spec.arn, 0) == generation
            if current:
                self._release(spec.pool_key, worker, took=False)
            else:  # the version changed meanwhile: nobody would invoke this one
                worker.kill()

        threading.Thread(target=later, name=f"prewarm {spec.name}", daemon=True).start()

    def retire(self, arn: str) -> None:
        """Stop idle workers of a function whose code or configuration changed or was deleted."""
        with self._lock:
            self._retired[arn] = self._retired.get(arn, 0) + 1
            doomed = [k for k in self._idle if k[0] == arn]
            workers = [w for k in doomed for w in self._idle.pop(k)]
        for worker in workers:
            worker.kill()

    def _spawn(self, spec: FunctionSpec) -> _Worker:
        return _Worker(spec, self._code_dir(spec), self.endpoint_url, self._zygote)

    def _acquire(self, spec: FunctionSpec) -> _Worker:
        key = spec.pool_key
        with self._cond:
            while True:
                pool = self._idle.get(key, [])
                while pool:
                    worker = pool.pop()
                    if worker.alive():
                        self._busy[key] = self._busy.get(key, 0) + 1
                        return worker
                    worker.kill()
                if self._busy.get(key, 0) < MAX_WORKERS_PER_VERSION:
                    self._busy[key] = self._busy.get(key, 0) + 1
                    break
                self._cond.wait(1.0)
        try:
            return self._spawn(spec)
        except Exception:  # whatever failed, the slot is given back
            self._release(key, None)
            raise

    def _release(self, key: tuple, worker: _Worker | None, took: bool = True) -> None:
        with self._cond:
            if took:
                self._busy[key] = self._busy.get(key, 1) - 1
            if worker is not None and worker.alive():
                self._idle.setdefault(key, []).append(worker)
            self._cond.notify_all()

    def invoke(self, fn: Any, payload: bytes | str, caller: dict[str, Any]) -> InvocationResult:
        """Invoke a moto LambdaFunction synchronously and log it like AWS does."""
        spec = FunctionSpec.of(fn)
        request_id = str(uuid.uuid4())
        started = time.time()
        text = payload.decode() if isinstance(payload, bytes) else (payload or "{}")
        if not spec.runtime.startswith("python"):
            error = {
                "errorType": "Runtime.InvalidRuntime",
                "errorMessage": f"The emulator runs Python functions only, not {spec.runtime!r}",
            }
            return self._finish(spec, request_id, started, caller, None, error, "", 0.0, None)
        worker = self._acquire(spec)
        init_ms = None
        try:
            hello = worker.wait_ready(max(spec.timeout, 10.0))
            if hello is None:
                worker.kill()
                error = _timeout_error(request_id, spec.timeout)
                return self._finish(
                    spec, request_id, started, caller, worker, error, "", spec.timeout * 1000, None
                )
            if worker.cold:
                init_ms = hello.get("init_ms")
                worker.cold = False
            init_log = hello.get("log", "") if init_ms is not None else ""
            context = {
                "request_id": request_id,
                "function_name": spec.name,
                "function_version": spec.version,
                "invoked_function_arn": spec.arn,
                "memory_limit_in_mb": spec.memory_mb,
                "log_group_name": f"/aws/lambda/{spec.name}",
                "log_stream_name": worker.log_stream,
            }
            try:
                response = worker.invoke(text, context, spec.timeout)
            except (EOFError, BrokenPipeError, OSError):
                response = {
                    "error": {
                        "errorType": "Runtime.ExitError",
                        "errorMessage": (
                            f"RequestId: {request_id} Error: Runtime exited unexpectedly"
                        ),
                    },
                    "log": "",
                    "duration_ms": (time.time() - started) * 1000,
                }
                worker.kill()
            if response is None:
                worker.kill()
                error = _timeout_error(request_id, spec.timeout)
                return self._finish(
                    spec,
                    request_id,
                    started,
                    caller,
                    worker,
                    error,
                    init_log,
                    spec.timeout * 1000,
                    init_ms,
                )
            return self._finish(
                spec,
                request_id,
                started,
                caller,
                worker,
                response.get("error"),
                init_log + response.get("log", ""),
                response["duration_ms"],
                init_ms,
                response.get("payload"),
            )
        finally:
            self._release(spec.pool_key, worker)

    def _finish(
        self,
        spec: FunctionSpec,
        request_id: str,
        started: float,
        caller: dict[str, Any],
        worker: _Worker | None,
        error: dict[str, Any] | None,
        printed: str,
        duration_ms: float,
        init_ms: float | None,
        payload: str | None = None,
    ) -> InvocationResult:
        lines = [f"START RequestId: {request_id} Version: {spec.version}"]
        lines += printed.splitlines()
        if error:
            lines.append(_error_log_event(error))
        lines.append(f"END RequestId: {request_id}")
        report = (
            f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Billed Duration: {int(duration_ms) + 1} ms\tMemory Size: {spec.memory_mb} MB\t"
            f"Max Memory Used: {_max_rss_mb(worker)} MB\t"
        )
        if init_ms is not None:
            report += f"Init Duration: {init_ms:.2f} ms\t"
        if error and error.get("errorType") == "Sandbox.Timedout":
            report += "Status: timeout"
        lines.append(report)
        stream = (
            worker.log_stream
            if worker
            else f"{datetime.now(UTC):%Y/%m/%d}/[{spec.version}]{uuid.uuid4().hex}"
        )
        try:
            self.log_sink(spec, stream, lines)
        except Exception:  # logging must never turn a finished invocation into a failure
            log.exception("could not write the log events of %s", request_id)
        if error:
            body = json.dumps(
                {**error, "requestId": request_id} if "stackTrace" in error else error
            )
        else:
            body = payload if payload is not None else "null"
        self.journal.record_invocation(
            Invocation(
                time=started,
                request_id=request_id,
                function=spec.name,
                version=spec.version,
                code_sha256=spec.code_sha256,
                caller=caller,
                outcome="error" if error else "ok",
                error_type=error.get("errorType") if error else None,
                duration_ms=round(duration_ms, 3),
            )
        )
        return InvocationResult(
            request_id=request_id,
            payload=body.encode(),
            function_error="Unhandled" if error else None,
            error_type=error.get("errorType") if error else None,
            log_tail="\n".join(lines)[-4096:],
            duration_ms=duration_ms,
            init_ms=init_ms,
        )


def _timeout_error(request_id: str, timeout: float) -> dict[str, Any]:
    return {
        "errorType": "Sandbox.Timedout",
        "errorMessage": (
            f"RequestId: {request_id} Error: Task timed out after {timeout:.2f} seconds"
        ),
    }


def _error_log_event(error: dict[str, Any]) -> str:
    if error.get("errorType") == "Sandbox.Timedout":
        return error["errorMessage"]
    head = f"[ERROR] {error.get('errorType')}: {error.get('errorMessage')}"
    trace = error.get("stackTrace") or []
    if not trace:
        return head
    return head + "\nTraceback (most recent call last):\n" + "".join(trace).rstrip("\n")


def _max_rss_mb(worker: _Worker | None) -> int:
    if worker is None:
        return 0
    try:
        status = Path(f"/proc/{worker.proc.pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0
