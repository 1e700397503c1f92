"""Talking to AWS: every client is read-only by construction (see `readonly`)."""
