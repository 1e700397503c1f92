"""The live viewer (and the replay viewer built on it): app, board, panels, screens."""
