"""`awsview lab setup|play|check|clean|list`: a lab's provided resources and the learner's steps,
played on an endpoint (a real account only with --real-account). A lab folder's steps are its own
bash commands (awsview.cli.labfolder); a lab with a Python player and no folder is played by it."""

from __future__ import annotations

import argparse
from pathlib import Path

from awsview.cli.common import EXIT_USAGE, fail
from awsview.model import untrusted


def _folder(name: str) -> Path | None:
    """The lab folder ``name`` names (a path, or a lab found on the search path), if any."""
    from awsview.profiles.folder import discover, is_folder_reference

    if is_folder_reference(name) or Path(name, "index.json").is_file():
        return Path(name)
    found = discover().get(name)
    return found[0] if found else None


def list_labs() -> int:
    from awsview.labs import LABS
    from awsview.labs.script import clean
    from awsview.profiles import ProfileError, load_folder
    from awsview.profiles.folder import discover

    folders = discover()
    for name, (path, origin) in folders.items():
        try:
            title = load_folder(path).title
        except ProfileError as exc:
            title = f"(cannot be loaded: {exc})"
        print(f"{clean(name)}  {clean(title)}  [{origin}: {clean(str(path))}]")
    for name, lab in LABS.items():
        if name not in folders:
            print(f"{name}  {lab.title}  [built-in player]")
    return 0


def run(args: argparse.Namespace) -> int:
    from awsview.labs import LABS

    if args.action == "list":
        return list_labs()
    if not args.name:
        return fail(f"which lab? a lab folder, or one of: {', '.join(LABS)}", EXIT_USAGE)
    folder = _folder(args.name)
    if folder is not None or args.action == "check":
        return run_folder(folder or Path(args.name), args)
    if args.junit is not None or args.twice:
        return fail("--junit and --twice go with lab check", EXIT_USAGE)
    return run_player(args)


def run_folder(path: Path, args: argparse.Namespace) -> int:
    from awsview.cli import labfolder
    from awsview.profiles import load_folder

    profile = load_folder(path, args.lang)  # a ProfileError is said by main()
    assert profile.folder is not None
    if args.action == "clean":
        return fail(
            f"lab {profile.name} is a lab folder: its last step cleans up "
            f"(awsview lab play {args.name} plays it to the end)",
            EXIT_USAGE,
        )
    if args.action == "check":
        return labfolder.check(profile.folder, profile, args)
    if args.junit is not None or args.twice:
        return fail("--junit and --twice go with lab check", EXIT_USAGE)
    return labfolder.play(profile.folder, args)


def run_player(args: argparse.Namespace) -> int:
    from awsview.aws.session import Target, check_credentials, identified, resolve
    from awsview.labs import get_lab
    from awsview.labs.player import LabError, LabPlayer

    lab = get_lab(args.name)
    # Decided before the player exists: making its clients runs the credential chain, which
    # may already reach out (instance metadata), and nothing is sent to a refused endpoint.
    target = Target(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    resolved = identified(resolve(target))
    if not resolved.is_local and not args.real_account:
        from awsview.cli.labfolder import not_local

        return fail(not_local(args.action, lab.name, resolved.describe()), EXIT_USAGE)
    player = LabPlayer(
        lab,
        endpoint_url=args.endpoint_url,
        region=args.region,
        profile=args.profile,
        log=lambda line: print(untrusted.line(line), flush=True),  # quotes AWS's answers
    )
    check_credentials(player.context.resolved)  # its session: the chain runs once
    if not resolved.is_local:
        try:
            account = player.context.account  # sts:GetCallerIdentity, before anything is written
        except Exception as exc:  # connection and credential errors, one line each
            from awsview.aws.errors import classify

            failure = classify(exc)
            return fail(
                f"cannot use {resolved.describe()}: {failure.text}",
                2 if failure.kind == "auth" else 1,
            )
        print(
            untrusted.line(
                f"awsview: {args.action} {lab.name} in account {account}, "
                f"region {resolved.region} ({resolved.describe()})"
            ),
            flush=True,
        )
    until = int(args.until) if args.until and args.until.isdigit() else args.until
    try:
        if args.action == "setup":
            player.setup()
        elif args.action == "play":
            player.play(until=until)
        else:
            player.clean()
    except LabError as exc:
        return fail(str(exc))
    except Exception as exc:  # botocore connection and credential errors, one line each
        from awsview.aws.errors import classify

        return fail(classify(exc).text)
    return 0
