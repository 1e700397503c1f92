"""What every command shares: how it refuses (`fail`, one line, the exit statuses), the terminal
check, the target of the command line checked once, and `--record FILE` said taken first.

The environment of a command that talks only to its own emulator (demo, docs) is
`awsview.aws.session.isolate_from_shell`, the one list of the shell's AWS variables to forget.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from awsview.model import untrusted

EXIT_OK = 0
EXIT_FAILURE = 1  # a failure at run time: an endpoint that does not answer, a step that failed
EXIT_USAGE = 2  # the command line or the configuration cannot work
EXIT_INTERRUPTED = 130  # Ctrl+C

# A refusal often quotes what it refuses (a file name, a recording's field, AWS's words): it is
# cleaned and bounded here, once, so that no caller can forget it.
MAX_MESSAGE = 1000


def fail(message: str, code: int = EXIT_FAILURE) -> int:
    """Say why in one line on stderr (``awsview: …``), cleaned of anything a terminal would obey;
    returns the exit status to return."""
    print(f"awsview: {untrusted.line(message, limit=MAX_MESSAGE)}", file=sys.stderr)
    return code


def has_terminal() -> bool:
    """Both ends are a terminal: what every command that draws needs (unless served)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def record_taken(args: argparse.Namespace) -> bool:
    """`--record FILE` names a file that exists: said before anything else is checked."""
    record = getattr(args, "record", None)
    return record is not None and (record.exists() or record.is_symlink())


def checked_target(args: argparse.Namespace) -> Any:
    """The target of the command line, resolved and its credentials fetched once, so that a
    configuration that cannot work is one line (ConfigError) before anything opens."""
    from awsview.aws.session import Target, check_credentials, resolve

    target = Target(profile=args.profile, region=args.region, endpoint_url=args.endpoint_url)
    check_credentials(resolve(target))
    return target
