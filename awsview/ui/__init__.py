"""The live viewer: a Textual app that shows the polling core's panels beside the learner's shell.

Nothing here calls AWS directly: the pollers fill a `LabState`, `awsview.core.render` turns it into
panels of plain rows, and these widgets show those rows.
"""
