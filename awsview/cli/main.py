"""The ``awsview`` command line.

Options that name where to look (``--profile``, ``--region``, ``--endpoint-url``), what to show
(``--lab``, ``--prefix``), how (``--theme``) and where to log (``--log-file``) mean the same
before or after the command: ``awsview --profile lab dump`` is ``awsview dump --profile lab``.
Each command lists the ones it takes (``TAKES``); one given where it makes no sense is refused,
wherever it stands. Every refusal is one line and exit status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

from awsview.ui import lifeline  # noqa: F401  first: it notes the parent before start-up ends

EXIT_USAGE = 2
_UNSET = object()

# The options shared by the commands: dest -> (flag, argparse keywords).
SHARED: dict[str, tuple[str, dict[str, Any]]] = {
    "profile": ("--profile", {
        "metavar": "NAME", "help": "AWS profile from the shared config (default: AWS_PROFILE, else default)"}),
    "region": ("--region", {
        "help": "AWS region (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's region)"}),
    "endpoint_url": ("--endpoint-url", {
        "metavar": "URL", "help": "AWS-compatible endpoint (default: as the SDK resolves it: "
                                  "AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the profile's)"}),
    "lab": ("--lab", {"action": "append", "help": "lab profile (ev04, ev05, q05); default: detected"}),
    "prefix": ("--prefix", {"help": "with no known lab: only resources named PREFIX*"}),
    "theme": ("--theme", {"help": "dark (default), light, high-contrast, docs, or any Textual theme"}),
    "record": ("--record", {
        "type": Path, "metavar": "FILE",
        "help": "append every change of what is shown to FILE (a new file), for replay"}),
    "log_file": ("--log-file", {
        "metavar": "FILE", "help": "record every failed call, retry and throttle with its API and time "
                                   "(default: $AWSVIEW_LOG)"}),
}
_WHERE = {"profile", "region", "endpoint_url"}
_VIEW = _WHERE | {"lab", "prefix"}
# Which shared options each command takes.
TAKES: dict[str, set[str]] = {
    "watch": _VIEW | {"theme", "log_file", "record"},
    "dump": _VIEW | {"log_file"},
    "screenshot": _VIEW | {"theme", "log_file"},
    "serve": _VIEW | {"theme", "log_file", "record"},
    "lab": set(_WHERE),
    "demo": {"lab", "theme", "log_file"},
    "docs": {"theme"},
    "class": {"theme", "log_file", "record"},
    "replay": {"theme"},
    "doctor": _VIEW | {"log_file"},
    "emulator": set(),
    "iam-policy": {"profile", "region", "lab", "prefix"},
}
# Defaults that are not None; "lab" takes many values only where the command says so.
DEFAULTS: dict[str, dict[str, Any]] = {
    "screenshot": {"theme": "docs"}, "docs": {"theme": "docs"},
}
DEFAULT = {"prefix": ""}
MANY_LABS = {"demo"}


class UsageError(Exception):
    """A command line that cannot mean anything; one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a refusal is one line (not the usage block), raised rather than exited on,
    so that the caller decides how to say it."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _fail(message: str, code: int = 1) -> int:
    print(f"awsview: {message}", file=sys.stderr)
    return code


def _add_shared(parser: argparse.ArgumentParser, names: set[str], prefix: str = "") -> None:
    for name, (flag, options) in SHARED.items():
        if name in names:
            parser.add_argument(flag, dest=prefix + name, default=argparse.SUPPRESS, **options)


def build_parser() -> argparse.ArgumentParser:
    from awsview import __version__

    parser = _Parser(prog="awsview", description="A live, read-only view of an AWS lab's real resources.",
                     epilog="With no command: awsview watch.")
    parser.add_argument("--version", action="version", version=f"awsview {__version__}")
    # Given before the command: kept apart (before_*) and merged in parse(), so a command's
    # own unset option never overwrites one given before it.
    _add_shared(parser, set(SHARED), prefix="before_")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def command(name: str, **options: Any) -> argparse.ArgumentParser:
        made = sub.add_parser(name, **options)
        _add_shared(made, TAKES[name])
        return made

    emu = command("emulator", help="run the embedded lab emulator (a local AWS endpoint)")
    emu.add_argument("--host", default="127.0.0.1")
    emu.add_argument("--port", type=int, default=5000, help="0 picks a free port")
    emu.add_argument("--state-dir", type=Path, help="where the journal and logs live")

    lab = command("lab", help="set up, play or clean a lab on an endpoint")
    lab.add_argument("action", choices=["setup", "play", "clean", "list"])
    lab.add_argument("name", nargs="?")
    lab.add_argument("--until", help="stop after this step (number or key)")
    lab.add_argument("--real-account", action="store_true",
                     help="allow setup, play and clean on an endpoint that is not local (a real AWS account)")

    demo = command("demo", help="start the emulator, open the viewer and play the labs in it")
    demo.add_argument("--step-seconds", type=float, default=8.0,
                      help="countdown before each step (space pauses it, n skips it)")

    dump = command("dump", help="poll once and print what the panels show")
    dump.add_argument("--json", action="store_true", help="machine-readable output")
    dump.add_argument("--graph", action="store_true",
                      help="draw each state machine and each execution on it instead of the panels")
    dump.add_argument("--width", type=int, default=60, help="graph width in columns (default 60)")
    dump.add_argument("--from", dest="source", type=Path, metavar="FILE",
                      help="print what a recording showed instead of polling")
    dump.add_argument("--at", metavar="TIME", help="with --from: end (default), start, HH:MM:SS, +MM:SS, -MM:SS")
    dump.add_argument("--learner", help="with --from on a class recording: whose viewer")
    dump.add_argument("--all-runs", action="store_true",
                      help="write decisions and verdicts of every run of the lab, not just the current one")

    shot = command("screenshot", help="save one screenshot of the viewer (SVG or PNG)")
    shot.add_argument("--size", default="120x40", help="columns x rows (default 120x40)")
    shot.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")

    docs = command("docs", help="play a lab on a fresh emulator, one screenshot per step")
    docs.add_argument("docs_lab", metavar="lab", nargs="?", help="ev04, ev05 or q05")
    docs.add_argument("--from", dest="source", type=Path, metavar="FILE",
                      help="draw the screenshots from a recording instead (one per checkpoint change)")
    docs.add_argument("--learner", help="with --from on a class recording: whose viewer")
    docs.add_argument("-o", "--output", type=Path, required=True, help="directory for the images and index.md")
    docs.add_argument("--size", default="120x40", help="columns x rows (default 120x40)")
    docs.add_argument("--format", choices=["svg", "png"], default="svg", help="image format (default svg)")

    serve = command("serve", help="the viewer in a browser, as a read-only presenter screen")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default loopback)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--token", help="required by every browser; mandatory off loopback (12+ characters; "
                                       "default: $AWSVIEW_TOKEN, which keeps it out of ps)")
    serve.add_argument("--class", dest="roster", type=Path, metavar="FILE",
                       help="serve the class view of the learners listed in FILE instead")
    serve.add_argument("--font-size", type=int, default=18, help="browser font size (default 18)")

    klass = command("class", help="the class view in the terminal: every learner's progress")
    klass.add_argument("roster", type=Path, metavar="FILE", help="TOML file of [[learner]] tables")
    klass.add_argument("--presenter", action="store_true", help=argparse.SUPPRESS)

    replay = command("replay", help="open the viewer on a recording, with a time line")
    replay.add_argument("source", type=Path, metavar="FILE", help="made by --record")
    replay.add_argument("--at", metavar="TIME", help="start here: start (default), end, HH:MM:SS, +MM:SS")
    replay.add_argument("--learner", help="a class recording: whose viewer")

    doctor = command("doctor", help="probe the endpoint once: what each panel can show exactly")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")

    # `awsview split …` is parsed by awsview.cli.split itself (see main): listed here for the help.
    sub.add_parser("split", help="open the viewer in a pane beside this shell (tmux, zellij, WezTerm, kitty)")

    policy = command("iam-policy", help="print the least-privilege read-only IAM policy the viewer needs")
    policy.add_argument("--account", default="*", help="account id in the resource ARNs (default: any, *)")

    watch = command("watch", help="open the viewer (also what `awsview` alone does)")
    watch.add_argument("--presenter", action="store_true",
                       help="read-only kiosk: navigation only, follows the newest execution and decision")
    return parser


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line as one namespace: every shared option the command takes is set (given
    before the command, after it, or its default); raises UsageError."""
    args, extra = build_parser().parse_known_args(argv)
    command = args.command or "watch"
    args.command = command
    if extra:
        flag = extra[0].split("=", 1)[0]
        if any(flag == f for f, _ in SHARED.values()):
            raise UsageError(f"awsview {command}: {flag} does not apply here (see awsview {command} --help)")
        raise UsageError(f"awsview {command}: unrecognized arguments: {' '.join(extra)} "
                         f"(see awsview {command} --help)")
    for name, (flag, _) in SHARED.items():
        before = getattr(args, f"before_{name}", _UNSET)
        after = getattr(args, name, _UNSET)
        if hasattr(args, f"before_{name}"):
            delattr(args, f"before_{name}")
        given = [v for v in (before, after) if v is not _UNSET]
        if given and name not in TAKES[command]:
            raise UsageError(f"awsview {command}: {flag} does not apply here (see awsview {command} --help)")
        if name == "lab":
            value = [lab for labs in given for lab in labs] or None
            if value is not None and command not in MANY_LABS:
                if len(set(value)) > 1:
                    raise UsageError(f"awsview {command}: {flag} given twice ({', '.join(value)}): one lab at a time")
                value = value[0]
        elif len(given) == 2 and before != after:
            raise UsageError(f"awsview {command}: {flag} given twice ({before} and {after})")
        else:
            value = given[0] if given else DEFAULTS.get(command, {}).get(name, DEFAULT.get(name))
        setattr(args, name, value)
    if command == "docs":
        args.lab = args.docs_lab
    args.presenter = getattr(args, "presenter", False)
    return args


def _split_at(argv: list[str]) -> int | None:
    """Where `split` stands when it is the command (only shared options before it), else None."""
    flags = {flag for flag, _ in SHARED.values()}
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "split":
            return index
        if token in flags:
            index += 2
        elif token.split("=", 1)[0] in flags:
            index += 1
        else:
            return None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    at = _split_at(argv)
    if at is not None:  # the rest of its line goes to the viewer, options included
        from awsview.cli.split import main as split

        return split(argv[at + 1:] + argv[:at])  # options given before `split` are the viewer's too
    try:
        args = parse(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    from awsview.aws.session import ConfigError
    from awsview.cli.extras import MissingExtra, require
    from awsview.aws.log import LogFileError, configure

    try:
        for extra, what in needs(args):
            require(extra, what)
        if "log_file" in TAKES[args.command]:
            configure(args.log_file)
        return COMMANDS[args.command](args)
    except (LogFileError, MissingExtra) as exc:
        return _fail(str(exc), EXIT_USAGE)
    except ConfigError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        return 130


def needs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The extras this command line needs: (extra, what needs it)."""
    found = []
    if args.command in ("emulator", "demo", "docs"):
        found.append(("emulator", f"awsview {args.command}"))
    if args.command == "serve":
        found.append(("serve", "awsview serve"))
    if (args.command == "screenshot" and str(args.output).lower().endswith(".png")) or \
            (args.command == "docs" and args.format == "png"):
        found.append(("png", f"awsview {args.command} in PNG"))
    return found


def run_emulator(args: argparse.Namespace) -> int:
    from awsview.emulator.server import EmulatorError, start

    try:
        emulator = start(args.host, args.port, args.state_dir)
    except EmulatorError as exc:
        return _fail(str(exc), EXIT_USAGE)

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"AWS View emulator listening on {emulator.endpoint_url}", flush=True)
    print(f"  write-decision journal: {emulator.endpoint_url}/_awsview/journal", flush=True)
    print(f"  state and logs:         {emulator.state_dir}", flush=True)
    print(f"  use it: export AWS_ENDPOINT_URL={emulator.endpoint_url} AWS_DEFAULT_REGION=us-east-1 "
          "AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing", flush=True)
    try:
        emulator.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0


def run_lab(args: argparse.Namespace) -> int:
    from awsview.aws.session import ConfigError, check_credentials
    from awsview.labs import LABS, UnknownLab, get_lab
    from awsview.labs.player import LabError, LabPlayer

    if args.action == "list":
        for name, lab in LABS.items():
            print(f"{name}  {lab.title}")
        return 0
    if not args.name:
        return _fail(f"which lab? one of: {', '.join(LABS)}", EXIT_USAGE)
    try:
        lab = get_lab(args.name)
    except UnknownLab as exc:
        return _fail(str(exc), EXIT_USAGE)
    try:
        player = LabPlayer(lab, endpoint_url=args.endpoint_url, region=args.region, profile=args.profile,
                           log=lambda line: print(line, flush=True))
        resolved = player.context.resolved
        if not resolved.is_local and not args.real_account:
            return _fail(f"lab {args.action} {lab.name} would create and delete resources on "
                         f"{resolved.describe()}, which is not a local endpoint: pass --real-account "
                         "if that is what you mean", EXIT_USAGE)
        check_credentials(resolved)
    except ConfigError as exc:
        return _fail(str(exc), EXIT_USAGE)
    if not resolved.is_local:
        try:
            account = player.context.account  # sts:GetCallerIdentity, before anything is written
        except Exception as exc:
            from awsview.aws.errors import classify

            failure = classify(exc)
            return _fail(f"cannot use {resolved.describe()}: {failure.text}", 2 if failure.kind == "auth" else 1)
        print(f"awsview: {args.action} {lab.name} in account {account}, region {resolved.region} "
              f"({resolved.describe()})", flush=True)
    until = int(args.until) if args.until and args.until.isdigit() else args.until
    try:
        if args.action == "setup":
            player.setup()
        elif args.action == "play":
            player.play(until=until)
        else:
            player.clean()
    except LabError as exc:
        return _fail(str(exc))
    except Exception as exc:  # botocore connection and credential errors, one line each
        from awsview.aws.errors import classify

        return _fail(classify(exc).text)
    return 0


def checked_target(args: argparse.Namespace) -> Any:
    """The target of the command line, resolved and its credentials fetched once, so that a
    configuration that cannot work is one line (ConfigError) before anything opens."""
    from awsview.aws.session import Target, check_credentials, resolve

    target = Target(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    check_credentials(resolve(target))
    return target


def run_demo(args: argparse.Namespace) -> int:
    from awsview.cli.demo import run

    return run(args.lab or ["ev04", "ev05", "q05"], theme=args.theme, step_seconds=args.step_seconds)


def run_dump(args: argparse.Namespace) -> int:
    from awsview.cli.dump import run

    if args.source is not None:
        from awsview.polling.recorded import dump_from

        if args.graph:
            return _fail("--graph draws live state machines; it does not go with --from FILE", EXIT_USAGE)
        return dump_from(args.source, args.at, args.learner, args.json)
    if args.at or args.learner:
        return _fail("--at and --learner go with --from FILE", EXIT_USAGE)
    if args.graph and args.width < 20:
        return _fail(f"--width {args.width}: a graph needs at least 20 columns", EXIT_USAGE)
    return run(checked_target(args), args.lab, args.prefix, args.json,
               graph_width=args.width if args.graph else None, all_runs=args.all_runs)


def run_screenshot(args: argparse.Namespace) -> int:
    from awsview.capture.shot import run

    return run(checked_target(args), args.lab, args.prefix, args.size, args.theme, args.output)


def run_docs(args: argparse.Namespace) -> int:
    if args.source is not None:
        if args.lab:
            return _fail("docs: give a lab or --from FILE, not both", EXIT_USAGE)
        from awsview.capture.docsfrom import run as run_from

        return run_from(args.source, args.output, args.size, args.theme, args.format, args.learner)
    if not args.lab:
        return _fail("docs: which lab? (ev04, ev05, q05), or --from FILE", EXIT_USAGE)
    from awsview.capture.docs import run

    return run(args.lab, args.output, args.size, args.theme, args.format)


def _record_taken(args: argparse.Namespace) -> bool:
    """`--record FILE` names a file that exists: said before anything else is checked."""
    record = getattr(args, "record", None)
    return record is not None and (record.exists() or record.is_symlink())


def run_serve(args: argparse.Namespace) -> int:
    from awsview.cli.serve import run

    if _record_taken(args):
        return _fail(f"{args.record} already exists; record into a new file", EXIT_USAGE)

    # Each session checks the target again; this says it once, before serving.
    return run(args, check_target=None if args.roster is not None else lambda: checked_target(args))


def run_class(args: argparse.Namespace) -> int:
    from awsview.ui.classview.view import run

    return run(args.roster, theme=args.theme, presenter=args.presenter, record=args.record)


def run_replay(args: argparse.Namespace) -> int:
    """The viewer on a recording. Needs a terminal, like the live one."""
    from awsview.polling.recorded import MomentError, parse_moment
    from awsview.polling.recording import RecordingError
    from awsview.ui import themes

    try:
        themes.check(args.theme)
    except themes.ThemeError as exc:
        return _fail(str(exc), EXIT_USAGE)
    from awsview.ui.viewer.replay import ReplayApp, open_player

    try:
        player = open_player(args.source, args.learner)
        first, last = player.marks[0].time, player.marks[player.last].time
        moment = parse_moment(args.at or "start", first, last)
    except (RecordingError, MomentError) as exc:
        return _fail(str(exc), EXIT_USAGE)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("replay needs a terminal; `awsview dump --from FILE --at TIME` prints a moment", EXIT_USAGE)
    index = player.index_at(moment)
    app = ReplayApp(player, start=index, moment=max(moment, player.marks[index].time), theme=args.theme)
    app.run()
    return app.return_code or 0


def run_doctor(args: argparse.Namespace) -> int:
    from awsview.polling.doctor import run

    return run(checked_target(args), args.lab, args.prefix, args.json)


def run_iam_policy(args: argparse.Namespace) -> int:
    """The policy for a lab or a prefix, in the region configured (any region if none is)."""
    from awsview import profiles
    from awsview.aws.policy import PolicyError, as_json, policy
    from awsview.aws.session import ConfigError, botocore_session

    try:
        profile = profiles.load(args.lab) if args.lab else profiles.generic_profile(args.prefix)
    except (profiles.UnknownProfile, profiles.ProfileError) as exc:
        return _fail(str(exc), EXIT_USAGE)
    if args.account != "*" and not (args.account.isdigit() and len(args.account) == 12):
        return _fail(f"--account must be a 12-digit account id, not {args.account!r}", EXIT_USAGE)
    session = botocore_session(args.profile)
    try:
        region = args.region or session.get_config_variable("region") or "*"
    except Exception as exc:  # an unknown profile, an unreadable config file
        from awsview.aws.session import _config_text

        raise ConfigError(_config_text(exc, args.profile)) from None
    partition = session.get_partition_for_region(region) if region != "*" else "aws"
    try:
        document = policy(profile, region=region, account=args.account, partition=partition)
    except PolicyError as exc:
        return _fail(str(exc), EXIT_USAGE)
    sys.stdout.write(as_json(document))
    return 0


def run_watch(args: argparse.Namespace) -> int:
    """The viewer. A configuration that cannot work is one line; a failed preflight (endpoint
    down, credentials refused) still opens it: the panels show the error, never "empty"."""
    if _record_taken(args):
        return _fail(f"{args.record} already exists; record into a new file", EXIT_USAGE)
    from awsview import profiles

    if args.lab:
        try:
            profiles.load(args.lab)
        except (profiles.UnknownProfile, profiles.ProfileError) as exc:
            return _fail(str(exc), EXIT_USAGE)
    from awsview.ui import preferences
    from awsview.ui import themes

    try:
        themes.check(args.theme)
    except themes.ThemeError as exc:
        return _fail(str(exc), EXIT_USAGE)
    saved, notice = preferences.load()
    theme = args.theme or saved.get("theme")
    try:
        themes.check(theme)
    except themes.ThemeError as exc:  # a theme saved once and since removed
        theme, notice = None, f"{preferences.path()}: {exc} (ignored)"
    target = checked_target(args)
    presenter = getattr(args, "presenter", False)
    record = getattr(args, "record", None)
    # A presenter screen may be driven by `awsview serve` (textual-serve), through pipes.
    if not presenter and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("the viewer needs a terminal; `awsview dump` prints the same panels once", EXIT_USAGE)
    from awsview.ui.viewer.app import AWSViewApp
    from awsview.ui.themes import ThemeError

    writer = recorder = None
    if record is not None:
        from awsview.polling.recorder import Recorder, open_recording, target_info
        from awsview.polling.recording import RecordingError

        try:
            writer = open_recording(record, "watch")
        except RecordingError as exc:
            return _fail(str(exc), EXIT_USAGE)
        import time

        recorder = Recorder(writer.channel("", target_info(target), time.time()))
    try:
        app = AWSViewApp(target=target, lab=args.lab, prefix=args.prefix, theme=theme,
                         presenter=presenter, recorder=recorder, remember=not presenter,
                         show_usage=bool(saved.get("usage")) and not presenter, notice=notice)
    except ThemeError as exc:
        return _fail(str(exc), EXIT_USAGE)
    if recorder is not None:
        recorder.on_stop = lambda reason: app.notify(reason, severity="error", timeout=10)
    try:
        lifeline.run(app)  # ends with its terminal, its serve session or its parent
    finally:
        if writer is not None:
            writer.close()
    return app.return_code or 0


COMMANDS = {
    "emulator": run_emulator, "lab": run_lab, "demo": run_demo, "dump": run_dump,
    "screenshot": run_screenshot, "docs": run_docs, "serve": run_serve, "class": run_class,
    "watch": run_watch, "iam-policy": run_iam_policy, "replay": run_replay, "doctor": run_doctor,
}
