"""Screenshots and docs: the viewer drawn headless, from a live lab or a recording."""
