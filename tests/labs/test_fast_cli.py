"""The fast AWS CLI a lab's bash finds first (awsview.labs.fastcli): each command, run in a child
of the fork server, prints and exits as the real `aws` does against the same emulator."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from awsview.labs import fastcli

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def clis(emulator, tmp_path_factory: pytest.TempPathFactory):
    """(the fast `aws`, the real one, their environment, a working directory)."""
    real = shutil.which("aws", path=str(Path(sys.executable).parent))
    assert real is not None and fastcli.usable(real)
    where = tmp_path_factory.mktemp("fastcli")
    fast = where / "bin" / "aws"
    fast.parent.mkdir()
    # No real `aws` to fall back on: only the server can answer these.
    fastcli.write_client(fast, str(where / "no-such-aws"))
    env = {
        **emulator.env,
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(where),
        fastcli.SOCKET_ENV: fastcli.server().socket_path,
    }
    work = where / "work"
    work.mkdir()
    return fast, real, env, work


def both(clis, *args: str, stdin: str | None = None) -> tuple[tuple, tuple]:
    """(exit status, stdout, stderr) of the fast and of the real CLI, same arguments."""
    fast, real, env, work = clis
    answers = []
    for argv in ([str(fast), *args], [real, "--endpoint-url", env["AWS_ENDPOINT_URL"], *args]):
        done = subprocess.run(
            argv, cwd=work, env=env, input=stdin, capture_output=True, text=True, timeout=120
        )
        answers.append((done.returncode, done.stdout, done.stderr))
    return answers[0], answers[1]


def fast(clis, *args: str) -> subprocess.CompletedProcess:
    cli, _, env, work = clis
    return subprocess.run(
        [str(cli), *args], cwd=work, env=env, capture_output=True, text=True, timeout=120
    )


def test_output_and_status_equal_the_real_cli(clis):
    _, _, _, work = clis
    # What changes the emulator runs once, through the fast CLI; what reads it, through both.
    (work / "item.json").write_text('{"id": {"S": "one"}, "n": {"N": "1"}}')
    for args, said in (
        (("sqs", "create-queue", "--queue-name", "fast-cli-jobs", "--query", "QueueUrl",
          "--output", "text"), "/fast-cli-jobs\n"),
        (("dynamodb", "create-table", "--table-name", "fast-cli-items", "--attribute-definitions",
          "AttributeName=id,AttributeType=S", "--key-schema", "AttributeName=id,KeyType=HASH",
          "--billing-mode", "PAY_PER_REQUEST", "--query", "TableDescription.TableName"),
         '"fast-cli-items"\n'),
        (("dynamodb", "put-item", "--table-name", "fast-cli-items", "--item", "file://item.json"),
         ""),  # file:// relative to the command's working directory
    ):  # fmt: skip
        done = fast(clis, *args)
        assert (done.returncode, done.stderr) == (0, ""), args
        assert done.stdout.endswith(said), (args, done.stdout)
    for args in (
        ("sts", "get-caller-identity"),
        ("sts", "get-caller-identity", "--query", "Account", "--output", "text"),
        ("sqs", "list-queues", "--output", "table"),
        ("dynamodb", "describe-table", "--table-name", "fast-cli-items", "--query",
         "Table.[TableName, KeySchema]"),
        ("dynamodb", "get-item", "--table-name", "fast-cli-items", "--key", '{"id":{"S":"one"}}',
         "--query", "Item.n.N", "--output", "text"),
    ):  # fmt: skip
        fast_answer, real_answer = both(clis, *args)
        assert fast_answer == real_answer, args
        assert fast_answer[0] == 0, fast_answer


def test_an_error_has_the_real_clis_status_and_words(clis):
    for args in (
        ("dynamodb", "describe-table", "--table-name", "fast-cli-nothing"),  # AWS says no
        ("sqs", "get-queue-url"),  # a required argument missing: the CLI's usage error
        ("dynamodb", "put-item", "--table-name", "x", "--item", "file://missing.json"),
        ("no-such-service", "list"),
    ):
        fast_answer, real_answer = both(clis, *args)
        assert fast_answer == real_answer, args
        assert fast_answer[0] not in (0, None), fast_answer


def test_stdin_reaches_the_command(clis):
    """The command's standard input is the caller's (its fd 0, passed to the child)."""
    table = ("--table-name", "fast-cli-stdin")
    schema = ("--key-schema", "AttributeName=id,KeyType=HASH")
    fast(clis, "dynamodb", "create-table", *table, *schema, "--billing-mode", "PAY_PER_REQUEST",
         "--attribute-definitions", "AttributeName=id,AttributeType=S")  # fmt: skip
    fast(clis, "dynamodb", "put-item", *table, "--item", '{"id": {"S": "one"}, "n": {"N": "7"}}')
    key = json.dumps({"id": {"S": "one"}})
    fast_answer, real_answer = both(
        clis, "dynamodb", "get-item", *table, "--key",
        "file:///dev/stdin", "--query", "Item.n.N", "--output", "text", stdin=key,
    )  # fmt: skip
    assert fast_answer == real_answer == (0, "7\n", "")


VERIFY = fastcli.Served("awsview.cli.served:main", ("verify",))  # as `lab check` serves it


def test_a_served_programs_command_runs_in_a_child_and_answers_as_the_real_one(
    clis, tmp_path: Path
):
    """`lab check` hands a verify script's `awsview verify` to the programs' server: the same
    words and status as the real `awsview`, from a child (the client's own program is gone)."""
    _, _, env, work = clis
    real = shutil.which("awsview", path=str(Path(sys.executable).parent))
    assert real is not None and fastcli.usable(real, VERIFY)
    client = tmp_path / "awsview"
    fastcli.write_client(client, str(tmp_path / "no-such-awsview"), VERIFY)
    env = {**env, fastcli.PROGRAMS_SOCKET_ENV: fastcli.server("programs").socket_path}
    answers = []
    for program in (client, real):
        for args in (("verify", "1", "--lab", "dlq"), ("verify", "9", "--lab", "dlq")):
            done = subprocess.run(
                [str(program), *args], cwd=work, env=env, capture_output=True, text=True,
                timeout=120,
            )  # fmt: skip
            answers.append((done.returncode, done.stdout, done.stderr))
    assert answers[:2] == answers[2:]
    (failed, said, _), (usage, _, why) = answers[:2]
    assert (failed, usage) == (1, 2) and "labex-dlq-jobs" in said and "no step '9'" in why
    # A command the client does not hand over runs its real program: here none.
    done = subprocess.run(
        [str(client), "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "FileNotFoundError" in done.stderr


def test_a_lab_s_bash_finds_the_served_awsview_first(tmp_path: Path, starts_processes):
    """`lab check` plays a lab with `awsview verify` served: the `awsview` its bash finds is the
    client, naming the programs' server."""
    from awsview.cli.served import SERVED
    from awsview.labs.script import Workspace
    from awsview.labspec.folder import builtin_dir, load_folder

    folder, _ = load_folder(builtin_dir() / "dlq")
    workspace = Workspace(folder, "http://127.0.0.1:9", "us-east-1", True, served=SERVED)
    try:
        said = workspace.run(f'command -v awsview; echo "${fastcli.PROGRAMS_SOCKET_ENV}"', "t", 60)
        found, socket_path = said.output.split()
        assert Path(found).parent == workspace.root / "bin"
        assert repr(SERVED["awsview"].entry) in Path(found).read_text()
    finally:
        workspace.close()
    assert socket_path == fastcli.server("programs").socket_path


def _answer(socket_path: str, argv: list[str], work: Path) -> bytes:
    """What a server answers a request for ``argv`` (b"A": it forked a child for it)."""
    import socket as sockets

    data = fastcli.encode_request(argv, {"PATH": os.defpath}, str(work))
    with sockets.socket(sockets.AF_UNIX) as conn, open(os.devnull, "r+b") as null:
        conn.settimeout(60)
        conn.connect(socket_path)
        sockets.send_fds(conn, [data], [null.fileno()] * 3)
        return conn.recv(1)


def test_a_server_refuses_what_it_does_not_run_and_the_real_program_answers(clis, tmp_path: Path):
    """The programs' server runs only an importable module:function of AWS View's own; the
    `aws` server only `aws`. A refused command is run by the client's real program (`echo`
    here); a module outside AWS View is refused before it is imported."""
    _, _, env, work = clis
    echo = shutil.which("echo")
    assert echo is not None
    programs = fastcli.server("programs").socket_path
    for served, socket_env, socket_path in (
        (fastcli.Served("awsview.no_such_module:main", ("say",)), fastcli.PROGRAMS_SOCKET_ENV,
         programs),
        (fastcli.Served("awsview.cli.served:no_such_function", ("say",)),
         fastcli.PROGRAMS_SOCKET_ENV, programs),
        (fastcli.Served("awsview.cli.served:main", ("say",)), fastcli.PROGRAMS_SOCKET_ENV,
         env[fastcli.SOCKET_ENV]),  # a program asked of the `aws` server
        (None, fastcli.SOCKET_ENV, programs),  # `aws` asked of the programs' server
    ):  # fmt: skip
        client = tmp_path / "program"
        fastcli.write_client(client, echo, served)
        done = subprocess.run(
            [str(client), "say", "hello"], cwd=work, env={**env, socket_env: socket_path},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        pinned = f"--endpoint-url {env['AWS_ENDPOINT_URL']} " if served is None else ""
        assert (done.returncode, done.stdout) == (0, f"{pinned}say hello\n"), (served, done.stderr)
    for foreign in ("os:getcwd", "antigravity:geohash", "awsviewer:main", "awsview.cli:main x"):
        assert _answer(programs, [foreign], work) == b"", foreign
        with pytest.raises(ValueError):
            fastcli.Served(foreign, ("x",))


def test_a_command_whose_streams_would_print_otherwise_runs_the_real_program(clis, tmp_path: Path):
    """A child writes through the server's standard streams, their encoding fixed when the
    server started: a command whose settings name another (PYTHONIOENCODING, PYTHONUTF8, the
    locale) runs the real program (`echo` here), which prints as they say."""
    _, _, env, work = clis
    echo = shutil.which("echo")
    assert echo is not None
    client = tmp_path / "aws"
    fastcli.write_client(client, echo)
    said = f"--endpoint-url {env['AWS_ENDPOINT_URL']} sts get-caller-identity\n"
    for other in ({"PYTHONIOENCODING": "latin-1"}, {"PYTHONUTF8": "0"}, {"LC_ALL": "C"}):
        done = subprocess.run(
            [str(client), "sts", "get-caller-identity"], cwd=work, env={**env, **other},
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, said), other
    assert fastcli.same_stdio({"LANG": "C.UTF-8", "PYTHONIOENCODING": ""}, {"LANG": "C.UTF-8"})
    assert not fastcli.same_stdio({"LANG": "C.UTF-8"}, {"LANG": "C.UTF-8", "LC_CTYPE": "UTF-8"})


def test_a_lab_keeps_the_shells_locale_and_stream_settings(monkeypatch: pytest.MonkeyPatch):
    """The lab's commands get the settings of the shell that plays it (and print as its fork
    server's children print): the locale, PYTHONIOENCODING and PYTHONUTF8."""
    from awsview.labs.script import Workspace
    from awsview.labspec.folder import builtin_dir, load_folder

    folder, _ = load_folder(builtin_dir() / "dlq")
    for name, value in (
        ("LC_CTYPE", "C.UTF-8"),
        ("PYTHONIOENCODING", "utf-8"),
        ("PYTHONUTF8", "1"),
    ):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(fastcli.SWITCH, "0")  # no server: only the environment is looked at
    workspace = Workspace(folder, "http://127.0.0.1:9", "us-east-1", True)
    workspace.close()
    assert fastcli.same_stdio(workspace.env, os.environ)
    assert workspace.env["PYTHONIOENCODING"] == "utf-8"


_KILLED = """
import os, signal
from awsview.labs import fastcli

print(fastcli.server("programs").socket_path, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_server_whose_owner_is_killed_leaves_nothing_behind(starts_processes):
    """An owner ended without its cleanup (SIGKILL, or `os._exit` when its terminal is gone)
    cannot remove its server's socket folder: the server does, as it leaves."""
    own = {k: v for k, v in os.environ.items() if k not in fastcli.KINDS.values()}  # none lent
    done = subprocess.run(
        [sys.executable, "-c", _KILLED], capture_output=True, text=True, timeout=60, env=own
    )
    assert done.returncode == -9, done.stderr
    folder = Path(done.stdout.strip()).parent
    assert folder.name.startswith("awsview-cli-")
    deadline = time.monotonic() + 30
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not folder.exists()


def test_forget_all_leaves_no_scratch_home_and_no_server_of_its_own(
    monkeypatch: pytest.MonkeyPatch, starts_processes
):
    """What a process ended by `os._exit` runs first (the demo, its terminal gone): every
    workspace it has not closed, and its own fork servers, go (`make demo` in a killed pane left
    both behind on a loaded machine)."""
    from awsview.labs.script import Workspace, forget_all
    from awsview.labspec.folder import builtin_dir, load_folder

    monkeypatch.setattr(fastcli, "_servers", {})  # this worker's own servers stay
    for lent in fastcli.KINDS.values():  # and a parallel run's, lent to it
        monkeypatch.delenv(lent, raising=False)
    folder, _ = load_folder(builtin_dir() / "dlq")
    workspace = Workspace(folder, "http://127.0.0.1:9", "us-east-1", True)
    server = fastcli.server()
    assert isinstance(server, fastcli.Server) and workspace.root.is_dir()
    forget_all()
    assert not workspace.root.exists()
    assert server.process.poll() is not None and not server.directory.exists()


def test_without_the_server_the_real_cli_answers(clis, tmp_path: Path):
    _, real, env, work = clis
    client = tmp_path / "aws"
    fastcli.write_client(client, real)
    for gone in ({fastcli.SOCKET_ENV: str(tmp_path / "nothing.sock")}, {fastcli.SWITCH: "0"}):
        done = subprocess.run(
            [str(client), "sts", "get-caller-identity", "--query", "Account", "--output", "text"],
            cwd=work,
            env={**env, **gone},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (done.returncode, done.stdout.strip()) == (0, "123456789012"), done.stderr


_REGISTRATIONS = """
import inspect
import awscli.clidriver
from awsview.labs import fastcli

calls = []
original = inspect.getfullargspec
inspect.getfullargspec = lambda func: calls.append(func) or original(func)
awscli.clidriver.create_clidriver()
cold = len(calls)
fastcli._prepare()
calls.clear()
awscli.clidriver.create_clidriver()
print(cold, len(calls))
"""


def test_a_child_inherits_the_servers_answers_for_the_clis_registrations(starts_processes):
    """What a command's start spends most of its own time on, each of some 400 event handlers'
    signatures checked as it registers, is answered in the server once for the handlers that
    are the same functions in every child: a child's driver checks only the others."""
    done = subprocess.run(
        [sys.executable, "-c", _REGISTRATIONS], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    cold, warm = (int(n) for n in done.stdout.split())
    assert cold > 300 and warm < cold / 2, (cold, warm)


_PARSED = """
import contextlib, io, json, os
import awscli.clidriver
from awsview.labs import fastcli

fastcli._prepare()
parsed = []
original = json.loads
json.loads = lambda text, **kw: parsed.append(len(text)) or original(text, **kw)
with contextlib.redirect_stderr(io.StringIO()) as said:  # --key left out: no request
    try:
        awscli.clidriver.create_clidriver().main(["dynamodb", "get-item", "--table-name", "t"])
    except SystemExit:
        pass
print("--key" in said.getvalue(), sum(size > 1000 for size in parsed))
"""


def test_a_childs_command_line_parses_no_data_file_of_its_own(starts_processes):
    """A command's tables (the CLI's own data, the model of each service it marks "preview",
    which every command reads) come parsed from the server: a child parses no data file for
    them (it parsed two, 48 kB, in every command)."""
    done = subprocess.run(
        [sys.executable, "-c", _PARSED], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "0"], done.stdout


_SERVED_PARSED = """
import json
import botocore.loaders
from awsview.aws.session import SERVICES, Target, botocore_session, resolve
from awsview.cli import served
from awsview.labs import fastcli

fastcli._read_once(served.prepare)  # as the programs' server runs it, on the first verify
parsed = []
original = json.loads
json.loads = lambda text, **kw: parsed.append(len(text)) or original(text, **kw)
loader = botocore.loaders.create_loader()  # a verify child's own, as it makes it
resolve(Target(region="us-east-1", endpoint_url="http://127.0.0.1:9"), loader)
session = botocore_session(None, loader)
for service in SERVICES:
    session.create_client(
        service, endpoint_url="http://127.0.0.1:9", region_name="us-east-1",
        aws_access_key_id="a", aws_secret_access_key="b",
    )
print(len(SERVICES), sum(size > 1000 for size in parsed))
"""


def test_a_verify_child_is_handed_every_services_model_parsed(starts_processes):
    """`awsview verify` (a served program) resolves its endpoint and makes a client of each
    service it reads: their models and endpoint rules come parsed from the server's `prepare`,
    also now that resolving an endpoint given outright makes one client, not one per service."""
    done = subprocess.run(
        [sys.executable, "-c", _SERVED_PARSED], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["9", "0"], done.stdout


_LISTED = """
import os
import awscli, awscli.clidriver
from awsview.labs import fastcli

fastcli._prepare()
os.environ["AWS_DATA_PATH"] += os.pathsep + awscli._awscli_data_path[-1]  # named twice
listed = []
original = os.listdir
os.listdir = lambda path=".": listed.append(path) or original(path)
awscli.clidriver.create_clidriver().session.get_available_services()
print(len(listed))
"""


def test_a_data_folder_named_twice_still_lists_the_services_from_the_servers_answer(
    starts_processes,
):
    """A caller whose AWS_DATA_PATH already names the CLI's data (a child of a process that
    imported awscli) has that folder twice in its search path: the server's listing of the
    services answers it too, where each command walked some 400 folders again."""
    done = subprocess.run(
        [sys.executable, "-c", _LISTED], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"], done.stdout


def test_a_child_collects_its_young_garbage_less_often(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, starts_processes
):
    """A command keeps nearly every object its driver and client make until it ends: the child
    collects young garbage once per CHILD_YOUNG_OBJECTS new objects, not Python's 700."""
    import gc
    import types

    probe = types.ModuleType("gc_probe")
    probe.report = lambda args: os.write(1, str(gc.get_threshold()[0]).encode()) and 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gc_probe", probe)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # as the server does for a served program's command
        quiet = [os.open(os.devnull, os.O_RDWR) for _ in range(2)]
        fastcli._child(
            ["gc_probe:report"],
            dict(os.environ),
            str(tmp_path),
            [quiet[0], write, quiet[1]],
            [read],
        )
    os.close(write)
    said = os.read(read, 100)
    os.close(read)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert int(said) == fastcli.CHILD_YOUNG_OBJECTS > gc.get_threshold()[0]


def test_handlers_made_of_the_same_code_share_one_answer():
    """Each command makes its argument renames and aliases as new closures of the same code:
    whether a handler takes **kwargs is answered once per code, through partials and bound
    methods, and once per class for a callable object; a handler that says its own signature
    answers for itself."""
    import functools
    import inspect

    def make(name):
        def rename(argument_table, **kwargs):
            return name

        return rename

    def strict(argument_table):
        return argument_table

    class Hoister:
        def __call__(self, **kwargs):
            return kwargs

        def method(self, a, **kwargs):
            return a

    key = fastcli._signature_key
    assert key(make("a")) == key(make("b")) == make("c").__code__
    assert key(functools.partial(make("d"), 1)) == make("e").__code__
    assert key(Hoister().method) == key(Hoister().method) == Hoister.method.__code__
    assert key(Hoister()) == key(Hoister()) != key(strict)
    told = make("f")
    told.__signature__ = inspect.signature(strict)  # type: ignore[attr-defined]
    assert key(told) is told
    assert key(len) is len and key(print) is print  # built-ins: each its own


def test_a_request_reads_back_as_it_was_sent_and_a_bad_one_is_refused():
    argv = ["s3", "cp", "", "a=b", "line\nbreak", "caf\udce9", "--query", "x[?y=='z']"]
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "EMPTY": "", "EQ": "a=b=c", "U": "é"}
    data = fastcli.encode_request(argv, env, "/tmp/work dir")
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    assert fastcli.decode_request(data[4:]) == (argv, env, "/tmp/work dir")
    for bad in (
        b"",
        b"/tmp\0",  # no argument count
        b"/tmp\0two\0",  # not a count
        b"/tmp\x002\0one\0",  # fewer arguments than counted
        b"/tmp\x000\0NOEQUALS\0",  # an environment entry without "="
        b"/tmp\x000\0=value\0",  # … or without a name
        b"/tmp\x000\0A=1",  # the last field does not end
    ):
        with pytest.raises(ValueError):
            fastcli.decode_request(bad)


def test_the_client_imports_nothing_but_built_in_modules(tmp_path: Path, starts_processes):
    """The client runs once per command: `socket` (its enums) and `json` (its regular
    expressions) doubled what a command's client cost."""
    client = tmp_path / "aws"
    fastcli.write_client(client, str(tmp_path / "no-such-aws"))
    code = client.read_text().split("\n", 1)[1]
    probe = code.replace("path = os.environ.get(", "print(sorted(sys.modules)); path = (", 1)
    done = subprocess.run(
        [sys.executable, "-IS", "-c", probe.replace("if not path or", "if True or", 1)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    loaded = set(ast.literal_eval(done.stdout.splitlines()[0]))
    assert not loaded & {"socket", "json", "re", "enum", "selectors"}, loaded


def test_a_server_named_in_the_environment_is_borrowed_if_it_is_this_user_s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """A process whose lab commands another AWS View process (a test, a lab's shell) runs uses
    that one's server; only a socket of this user's, in a folder only they can enter."""
    import socket as sockets

    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    path = folder / "cli.sock"
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    listener.bind(str(path))
    monkeypatch.setattr(fastcli, "_servers", {})
    try:
        monkeypatch.setenv(fastcli.SOCKET_ENV, str(path))
        lent = fastcli.server()
        assert isinstance(lent, fastcli.Lent) and lent.socket_path == str(path)
        assert fastcli.server() is lent
        (tmp_path / "file").write_text("")
        folder.chmod(0o755)  # another user could have put it there
        for named in (str(path), "cli.sock", str(tmp_path / "file"), str(folder / "gone.sock")):
            monkeypatch.setenv(fastcli.SOCKET_ENV, named)
            assert fastcli.lent() is None, named
        folder.chmod(0o700)
        monkeypatch.setenv(fastcli.SOCKET_ENV, str(tmp_path / "file"))
        assert fastcli.lent() is None
    finally:
        listener.close()
