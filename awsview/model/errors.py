"""The one base of every error meant for the person at the command line.

Each says in one line what is wrong and carries the exit status it ends the command with: 2
(``EXIT_USAGE``) when the command line or the configuration cannot work, 1 when something failed
at run time. ``awsview.cli.main`` catches them once and says them through ``fail``, which cleans
and bounds the text: a command raises, it never formats its own refusal.
"""

from __future__ import annotations


class UserError(Exception):
    """One line for the user; ``exit_status`` is what the command ends with."""

    exit_status = 2


class FailedError(UserError):
    """Something failed at run time (an endpoint, a file that cannot be read): exit status 1."""

    exit_status = 1
