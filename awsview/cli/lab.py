"""`awsview lab setup|play|clean|list`: a lab's provided resources and the learner's steps, played
through boto3 on an endpoint (a real account only with --real-account)."""

from __future__ import annotations

import argparse

from awsview.cli.common import EXIT_USAGE, fail
from awsview.model import untrusted


def run(args: argparse.Namespace) -> int:
    from awsview.aws.session import Target, check_credentials, identified, resolve
    from awsview.labs import LABS, get_lab
    from awsview.labs.player import LabError, LabPlayer

    if args.action == "list":
        for name, lab in LABS.items():
            print(f"{untrusted.line(name)}  {untrusted.line(lab.title)}")
        return 0
    if not args.name:
        return fail(f"which lab? one of: {', '.join(LABS)}", EXIT_USAGE)
    lab = get_lab(args.name)
    # Decided before the player exists: making its clients runs the credential chain, which
    # may already reach out (instance metadata), and nothing is sent to a refused endpoint.
    target = Target(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    resolved = identified(resolve(target))
    if not resolved.is_local and not args.real_account:
        return fail(
            f"lab {args.action} {lab.name} would create and delete resources on "
            f"{resolved.describe()}, which is not a local endpoint (loopback or an AWS View "
            "emulator): pass --real-account if that is what you mean",
            EXIT_USAGE,
        )
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
