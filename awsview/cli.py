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

    shot = sub.add_parser("screenshot", help="save one screenshot of the viewer (SVG or PNG)")
    _add_target(shot)
    shot.add_argument("--size", default="120x40", help="columns x rows (default 120x40)")
    shot.add_argument("--theme", default="docs", help="default: docs")
    shot.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")

    docs = sub.add_parser("docs", help="play a lab on a fresh emulator, one screenshot per step")
    docs.add_argument("lab", help="ev04, ev05 or q05")
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

    klass = sub.add_parser("class", help="the class view in the terminal: every learner's progress")
    klass.add_argument("roster", type=Path, metavar="FILE", help="TOML file of [[learner]] tables")
    klass.add_argument("--presenter", action="store_true", help=argparse.SUPPRESS)
    _add_theme(klass)

    watch = sub.add_parser("watch", help="open the viewer (also what `awsview` alone does)")
    _add_target(watch)
    _add_theme(watch)
    watch.add_argument("--presenter", action="store_true",
                       help="read-only kiosk: navigation only, follows the newest execution and decision")
    # `awsview` with no command is `awsview watch`, with the same options.
    _add_target(parser)
    _add_theme(parser)
    return parser


def _add_theme(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", help="dark (default), light, high-contrast, docs, or any Textual theme")


def _add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lab", help="lab profile (ev04, ev05, q05); default: detected")
    parser.add_argument("--prefix", default="", help="with no known lab: only resources named PREFIX*")
    parser.add_argument("--profile", help="AWS profile from the shared config")
    _add_endpoint(parser)


def main(argv: Sequence[str] | None = None) -> int:
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

    target = Target.from_env(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    return run(target, args.lab, args.prefix, args.json)


def run_screenshot(args: argparse.Namespace) -> int:
    from awsview.aws.session import Target
    from awsview.ui.shot import run

    target = Target.from_env(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    return run(target, args.lab, args.prefix, args.size, args.theme, args.output)


def run_docs(args: argparse.Namespace) -> int:
    from awsview.docs import run

    return run(args.lab, args.output, args.size, args.theme, args.format)


def run_serve(args: argparse.Namespace) -> int:
    from awsview.serve import run

    return run(args)


def run_class(args: argparse.Namespace) -> int:
    from awsview.ui.classview import run

    return run(args.roster, theme=args.theme, presenter=args.presenter)


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
    # A presenter screen may be driven by `awsview serve` (textual-serve), through pipes.
    if not presenter and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _fail("the viewer needs a terminal; `awsview dump` prints the same panels once", EXIT_USAGE)
    from awsview.ui import lifeline
    from awsview.ui.app import AWSViewApp
    from awsview.ui.themes import ThemeError

    target = Target.from_env(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    try:
        app = AWSViewApp(target=target, lab=args.lab, prefix=args.prefix, theme=args.theme,
                         presenter=presenter)
    except ThemeError as exc:
        return _fail(str(exc), EXIT_USAGE)
    lifeline.run(app)  # ends with its terminal, its serve session or its parent
    return app.return_code or 0
