"""`awsview lab setup|play|check|clean|list`: a lab folder's provided resources and the learner's
steps, its own bash commands played on an endpoint (a real account only with --real-account); see
awsview.cli.labfolder. A lab is named by its folder or by a name on the lab search path."""

from __future__ import annotations

import argparse
from pathlib import Path

from awsview.cli.common import EXIT_USAGE, fail


def _folder(name: str) -> Path | None:
    """The lab folder ``name`` names (a path, or a lab found on the search path), if any."""
    from awsview.labspec.folder import discover, is_folder_reference

    if is_folder_reference(name) or Path(name, "index.json").is_file():
        return Path(name)
    found = discover().get(name)
    return found[0] if found else None


def list_labs() -> int:
    from awsview.labs.script import clean
    from awsview.labspec import SpecError, load_folder
    from awsview.labspec.folder import discover

    for name, (path, origin) in discover().items():
        try:
            title = load_folder(path).title
        except SpecError as exc:
            title = f"(cannot be loaded: {exc})"
        print(f"{clean(name)}  {clean(title)}  [{origin}: {clean(str(path))}]")
    return 0


def run(args: argparse.Namespace) -> int:
    from awsview.labs import UnknownLab, names

    if args.action == "list":
        return list_labs()
    if not args.name:
        return fail(f"which lab? a lab folder, or one of: {', '.join(names())}", EXIT_USAGE)
    folder = _folder(args.name)
    if folder is None and args.action != "check":
        raise UnknownLab(args.name, names())  # said by main(), exit 2
    return run_folder(folder or Path(args.name), args)


def run_folder(path: Path, args: argparse.Namespace) -> int:
    from awsview.cli import labfolder
    from awsview.labspec import load_folder

    profile = load_folder(path, args.lang)  # a SpecError is said by main()
    assert profile.folder is not None
    if args.action == "check":
        return labfolder.check(profile.folder, profile, args)
    if args.junit is not None or args.twice or args.settle is not None:
        return fail("--junit, --twice and --settle go with lab check", EXIT_USAGE)
    if args.action == "clean" and not any(s.key == "cleanup" for s in profile.folder.steps):
        return fail(
            f"lab {profile.name} has no step keyed cleanup in its awsview.toml "
            f"(awsview lab play {args.name} plays it to the end)",
            EXIT_USAGE,
        )
    return labfolder.play(profile.folder, args)
