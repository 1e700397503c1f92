"""AWS View: a live, read-only view of an AWS lab's real resources."""

__version__ = "0.1.0"
