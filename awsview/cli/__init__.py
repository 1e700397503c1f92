"""The command line: the parser and its dispatch table (`main`), the plumbing every command shares
(`common`), and one module per command."""

from awsview.cli.main import main

__all__ = ["main"]
