"""The ``awsview`` commands a lab's bash hands the fork server (awsview.labs.fastcli) when `lab
check` plays it: ``awsview verify``, which a verify script runs, for each step, often twice. The
server imports this module on the first of them, and with it what a verify imports as it runs;
each later one runs in a child forked with all of that loaded, as the real ``awsview`` would."""

from __future__ import annotations

import aiobotocore.session  # noqa: F401  (what `verify` imports as it runs)
import botocore.loaders

from awsview import labspec  # noqa: F401
from awsview.aws.session import read_models
from awsview.cli import verify  # noqa: F401
from awsview.cli.main import main
from awsview.labs.fastcli import Served
from awsview.polling import bootstrap, stepcheck  # noqa: F401

__all__ = ["SERVED", "main", "prepare"]

SERVED = {"awsview": Served(f"{__name__}:main", ("verify",))}


def prepare() -> None:
    """Run once in the fork server: make a client of every service the viewer reads, as a
    verify does (no request sent), so that each verify's child is handed the service models and
    endpoint rules parsed. On a loader of its own, not the process's (`shared_loader`): a child
    makes its own from its environment (HOME, AWS_DATA_PATH), as the real ``awsview`` would."""
    read_models(botocore.loaders.create_loader())
