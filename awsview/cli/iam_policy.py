"""`awsview iam-policy`: the least-privilege read-only IAM policy the viewer needs."""

from __future__ import annotations

import argparse
import sys

from awsview.cli.common import EXIT_USAGE, fail


def run(args: argparse.Namespace) -> int:
    """The policy for a lab or a prefix, in the region configured (any region if none is)."""
    from awsview import labspec
    from awsview.aws.policy import as_json, policy
    from awsview.aws.session import ConfigError, Target, botocore_session, resolve

    profile = labspec.load(args.lab) if args.lab else labspec.generic_spec(args.prefix)
    if args.account != "*" and not (args.account.isdigit() and len(args.account) == 12):
        return fail(f"--account must be a 12-digit account id, not {args.account!r}", EXIT_USAGE)
    session = botocore_session(args.profile)
    try:
        region = args.region or session.get_config_variable("region") or "*"
    except Exception as exc:  # an unknown profile, an unreadable config file
        from awsview.aws.errors import config_text

        raise ConfigError(config_text(exc, args.profile)) from None
    if region != "*":
        resolve(Target(profile=args.profile, region=region))  # the region check every command makes
    partition = session.get_partition_for_region(region) if region != "*" else "aws"
    document = policy(profile, region=region, account=args.account, partition=partition)
    sys.stdout.write(as_json(document))
    return 0
