"""Recordings: the file, following a viewer into it, and moments read back."""
