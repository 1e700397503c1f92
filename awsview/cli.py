"""The ``awsview`` command line."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Sequence

from awsview.ui import lifeline  # noqa: F401  first: it notes the parent before start-up ends

EXIT_USAGE = 2


def _fail(message: str, code: int = 1) -> int:
    print(f"awsview: {message}", file=sys.stderr)
    return code


def _add_endpoint(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--endpoint-url", help="AWS-compatible endpoint (default: the standard chain)")
    parser.add_argument("--region", default=None, help="AWS region (default: from the chain, else us-east-1)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="awsview", description=__doc__)
    sub = parser.add_subparsers(dest="command")

    emu = sub.add_parser("emulator", help="run the embedded lab emulator (a local AWS endpoint)")
    emu.add_argument("--host", default="127.0.0.1")
    emu.add_argument("--port", type=int, default=5000, help="0 picks a free port")
    emu.add_argument("--state-dir", type=Path, help="where the journal and logs live")

    lab = sub.add_parser("lab", help="set up, play or clean a lab on an endpoint")
    lab.add_argument("action", choices=["setup", "play", "clean", "list"])
    lab.add_argument("name", nargs="?")
    lab.add_argument("--until", help="stop after this step (number or key)")
    _add_endpoint(lab)

    demo = sub.add_parser("demo", help="start the emulator, open the viewer and play the labs in it")
    demo.add_argument("--lab", action="append", help="only these labs (default: ev04, ev05, q05)")
    demo.add_argument("--step-seconds", type=float, default=8.0,
                      help="countdown before each step (space pauses it, n skips it)")
    _add_theme(demo)

    dump = sub.add_parser("dump", help="poll once and print what the panels show")
    _add_target(dump)
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

    shot = sub.add_parser("screenshot", help="save one screenshot of the viewer (SVG or PNG)")
    _add_target(shot)
    shot.add_argument("--size", default="120x40", help="columns x rows (default 120x40)")
    shot.add_argument("--theme", default="docs", help="default: docs")
    shot.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")

    docs = sub.add_parser("docs", help="play a lab on a fresh emulator, one screenshot per step")
    docs.add_argument("lab", nargs="?", help="ev04, ev05 or q05")
    docs.add_argument("--from", dest="source", type=Path, metavar="FILE",
                      help="draw the screenshots from a recording instead (one per checkpoint change)")
    docs.add_argument("--learner", help="with --from on a class recording: whose viewer")
    docs.add_argument("-o", "--output", type=Path, required=True, help="directory for the images and index.md")
    docs.add_argument("--size", default="120x40", help="columns x rows (default 120x40)")
    docs.add_argument("--theme", default="docs", help="default: docs")
    docs.add_argument("--format", choices=["svg", "png"], default="svg", help="image format (default svg)")

    serve = sub.add_parser("serve", help="the viewer in a browser, as a read-only presenter screen")
    _add_target(serve)
    _add_theme(serve)
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default loopback)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--token", help="required by every browser; mandatory off loopback (12+ characters)")
    serve.add_argument("--class", dest="roster", type=Path, metavar="FILE",
                       help="serve the class view of the learners listed in FILE instead")
    serve.add_argument("--font-size", type=int, default=18, help="browser font size (default 18)")
    _add_record(serve)

    klass = sub.add_parser("class", help="the class view in the terminal: every learner's progress")
    klass.add_argument("roster", type=Path, metavar="FILE", help="TOML file of [[learner]] tables")
    klass.add_argument("--presenter", action="store_true", help=argparse.SUPPRESS)
    _add_theme(klass)
    _add_record(klass)

    replay = sub.add_parser("replay", help="open the viewer on a recording, with a time line")
    replay.add_argument("source", type=Path, metavar="FILE", help="made by --record")
    replay.add_argument("--at", metavar="TIME", help="start here: start (default), end, HH:MM:SS, +MM:SS")
    replay.add_argument("--learner", help="a class recording: whose viewer")
    _add_theme(replay)

    doctor = sub.add_parser("doctor", help="probe the endpoint once: what each panel can show exactly")
    _add_target(doctor)
    doctor.add_argument("--json", action="store_true", help="machine-readable output")

    # `awsview split …` is parsed by awsview.split itself (see main): listed here for the help.
    sub.add_parser("split", help="open the viewer in a pane beside this shell (tmux, zellij, WezTerm, kitty)")

    watch = sub.add_parser("watch", help="open the viewer (also what `awsview` alone does)")
    _add_target(watch)
    _add_theme(watch)
    watch.add_argument("--presenter", action="store_true",
                       help="read-only kiosk: navigation only, follows the newest execution and decision")
    _add_record(watch)
    # `awsview` with no command is `awsview watch`, with the same options.
    _add_target(parser)
    _add_theme(parser)
    _add_record(parser)
    return parser


def _add_record(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="append every change of what is shown to FILE (a new file), for replay")


def _add_theme(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", help="dark (default), light, high-contrast, docs, or any Textual theme")


def _add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lab", help="lab profile (ev04, ev05, q05); default: detected")
    parser.add_argument("--prefix", default="", help="with no known lab: only resources named PREFIX*")
    parser.add_argument("--profile", help="AWS profile from the shared config")
    _add_endpoint(parser)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["split"]:  # the rest of its line goes to the viewer, options included
        from awsview.split import main as split

        return split(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        if args.command == "emulator":
            return run_emulator(args)
        if args.command == "lab":
            return run_lab(args)
        if args.command == "demo":
            return run_demo(args)
        if args.command == "dump":
            return run_dump(args)
        if args.command == "screenshot":
            return run_screenshot(args)
        if args.command == "docs":
            return run_docs(args)
        if args.command == "serve":
            return run_serve(args)
        if args.command == "class":
            return run_class(args)
        if args.command == "replay":
            return run_replay(args)
        if args.command == "doctor":
            return run_doctor(args)
        return run_watch(args)
    except KeyboardInterrupt:
        return 130


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
    player = LabPlayer(lab, endpoint_url=args.endpoint_url, region=args.region or "us-east-1",
                       log=lambda line: print(line, flush=True))
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
        return _fail(_describe_aws_error(exc))
    return 0


def _describe_aws_error(exc: Exception) -> str:
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    if isinstance(exc, NoCredentialsError):
        return "no AWS credentials found (set a profile, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)"
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        return f"{error.get('Code', 'Error')}: {error.get('Message', '')}".strip()
    if isinstance(exc, BotoCoreError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def run_demo(args: argparse.Namespace) -> int:
    from awsview.demo import run

    return run(args.lab or ["ev04", "ev05", "q05"], theme=args.theme, step_seconds=args.step_seconds)


def run_dump(args: argparse.Namespace) -> int:
    from awsview.aws.session import Target
    from awsview.dump import run

    if args.source is not None:
        from awsview.recorded import dump_from

        if args.graph:
            return _fail("--graph draws live state machines; it does not go with --from FILE", EXIT_USAGE)

        return dump_from(args.source, args.at, args.learner, args.json)
    if args.at or args.learner:
        return _fail("--at and --learner go with --from FILE", EXIT_USAGE)
    if args.graph and args.width < 20:
        return _fail(f"--width {args.width}: a graph needs at least 20 columns", EXIT_USAGE)
    target = Target.from_env(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    return run(target, args.lab, args.prefix, args.json, graph_width=args.width if args.graph else None,
               all_runs=args.all_runs)


def run_screenshot(args: argparse.Namespace) -> int:
    from awsview.aws.session import Target
    from awsview.ui.shot import run

    target = Target.from_env(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    return run(target, args.lab, args.prefix, args.size, args.theme, args.output)


def run_docs(args: argparse.Namespace) -> int:
    if args.source is not None:
        if args.lab:
            return _fail("docs: give a lab or --from FILE, not both", EXIT_USAGE)
        from awsview.ui.docsfrom import run as run_from

        return run_from(args.source, args.output, args.size, args.theme, args.format, args.learner)
    if not args.lab:
        return _fail("docs: which lab? (ev04, ev05, q05), or --from FILE", EXIT_USAGE)
    from awsview.docs import run

    return run(args.lab, args.output, args.size, args.theme, args.format)


def run_serve(args: argparse.Namespace) -> int:
    from awsview.serve import run

    return run(args)


def run_class(args: argparse.Namespace) -> int:
    from awsview.ui.classview import run

    return run(args.roster, theme=args.theme, presenter=args.presenter, record=args.record)


def run_replay(args: argparse.Namespace) -> int:
    """The viewer on a recording. Needs a terminal, like the live one."""
    from awsview.recorded import MomentError, parse_moment
    from awsview.recording import RecordingError
    from awsview.ui import themes

    try:
        themes.check(args.theme)
    except themes.ThemeError as exc:
        return _fail(str(exc), EXIT_USAGE)
    from awsview.ui.replay import ReplayApp, open_player

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
    from awsview.aws.session import Target
    from awsview.doctor import run

    target = Target.from_env(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    return run(target, args.lab, args.prefix, args.json)


def run_watch(args: argparse.Namespace) -> int:
    """The viewer. A failed preflight still opens it: the panels show the error, never "empty"."""
    from awsview import profiles
    from awsview.aws.session import Target

    if args.lab:
        try:
            profiles.load(args.lab)
        except (profiles.UnknownProfile, profiles.ProfileError) as exc:
            return _fail(str(exc), EXIT_USAGE)
    from awsview.ui import themes

    try:
        themes.check(args.theme)
    except themes.ThemeError as exc:
        return _fail(str(exc), EXIT_USAGE)
    presenter = getattr(args, "presenter", False)
    record = getattr(args, "record", None)
    if record is not None and (record.exists() or record.is_symlink()):
        return _fail(f"{record} already exists; record into a new file", EXIT_USAGE)
    # A presenter screen may be driven by `awsview serve` (textual-serve), through pipes.
    if not presenter and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("the viewer needs a terminal; `awsview dump` prints the same panels once", EXIT_USAGE)
    from awsview.ui import lifeline
    from awsview.ui.app import AWSViewApp
    from awsview.ui.themes import ThemeError

    target = Target.from_env(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    writer = recorder = None
    if record is not None:
        from awsview.recorder import Recorder, open_recording, target_info
        from awsview.recording import RecordingError

        try:
            writer = open_recording(record, "watch")
        except RecordingError as exc:
            return _fail(str(exc), EXIT_USAGE)
        import time

        recorder = Recorder(writer.channel("", target_info(target), time.time()))
    try:
        app = AWSViewApp(target=target, lab=args.lab, prefix=args.prefix, theme=args.theme,
                         presenter=presenter, recorder=recorder)
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
