"""The Lambda workers' common parent: a process that has imported the AWS SDK for Python once and
forks each new worker from itself, so a cold start does not import boto3 again (the Lambda
runtime's own interpreter has it loaded too). Runs as a plain script, as _bootstrap.py does (never
imports awsview or moto); a forked worker goes on as _bootstrap.py would have started.

Protocol on the socket whose fd is argv[1]: first the zygote says one JSON line, the top-level
packages it imported beyond the standard library (``{"preloaded": [...]}``: a function whose code
bundles one of them gets a fresh interpreter instead, to import its own). Then, one at a time, the
emulator sends a JSON line ``{"env": {...}, "cwd": "..."}`` with the worker's stdin and stdout
attached (SCM_RIGHTS); the zygote forks and answers ``<pid>\\n`` with a pidfd of the worker
attached. The socket's end (the emulator gone) ends the zygote; its workers end as their stdin
hangs up, as they always did.
"""

import json
import os
import signal
import socket
import sys

import _bootstrap  # this script's folder is first on its path, as for any script

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_REQUEST = 1 << 20  # a function's environment is at most 4 KB on AWS


def _preload():
    """The SDK, as a handler imports it; nothing is created (a session reads its environment
    when made, in the worker)."""
    try:
        import boto3
        import boto3.session  # noqa: F401
        import botocore.session  # noqa: F401
    except Exception:  # no SDK here: workers import what they import, as before
        pass
    stdlib = set(sys.stdlib_module_names) | {"__main__"}
    return sorted({name.split(".")[0] for name in sys.modules} - stdlib - {"_bootstrap"})


def _read_request(conn):
    """(env, cwd, [stdin, stdout]) of the next request; None when the emulator has gone."""
    data, fds = b"", []
    while not data.endswith(b"\n"):
        chunk, more, _, _ = socket.recv_fds(conn, 65536, 2)
        fds += more
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None
        data += chunk
        if len(data) > MAX_REQUEST:
            raise ValueError("request too large")
    request = json.loads(data)
    if len(fds) != 2:
        raise ValueError("a request brings the worker's stdin and stdout")
    return request["env"], request["cwd"], fds


def _become_worker(conn, env, cwd, fds):
    """In the forked child: the worker _bootstrap.py would have been, in ``cwd`` with ``env``."""
    try:
        conn.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the handler's own subprocesses are waited
        os.dup2(fds[0], 0)
        os.dup2(fds[1], 1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        for fd in (*fds, devnull):
            os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [os.path.join(HERE, "_bootstrap.py")]
        # The worker's path is its code's (_bootstrap puts it first), then the interpreter's.
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
        _bootstrap.main()
    except BaseException:
        os._exit(1)
    os._exit(0)


def serve(conn):
    # Workers are reaped as they end (the emulator watches each one through its pidfd).
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    conn.sendall(json.dumps({"preloaded": _preload()}).encode() + b"\n")
    while True:
        try:
            request = _read_request(conn)
        except (OSError, ValueError):
            return
        if request is None:
            return
        env, cwd, fds = request
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            _become_worker(conn, env, cwd, fds)
        for fd in fds:
            os.close(fd)
        try:
            if pid < 0:
                conn.sendall(b"-1\n")
                continue
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:  # it ended at once: the emulator starts one itself
                conn.sendall(b"-1\n")
                continue
            try:
                socket.send_fds(conn, [f"{pid}\n".encode()], [pidfd])
            finally:
                os.close(pidfd)
        except OSError:
            return


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
