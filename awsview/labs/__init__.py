"""The labs AWS View is built for, as data, and a player that performs their steps."""

from __future__ import annotations

from awsview.labs import ev04, ev05, q05
from awsview.labs.model import Lab, LabError, Step, UnknownLab

LABS: dict[str, Lab] = {lab.name: lab for lab in (ev04.LAB, ev05.LAB, q05.LAB)}


def get_lab(name: str) -> Lab:
    """The lab with this name (ev04, ev05, q05); UnknownLab names the known ones."""
    try:
        return LABS[name]
    except (KeyError, TypeError):
        raise UnknownLab(str(name), sorted(LABS)) from None


__all__ = ["LABS", "Lab", "LabError", "Step", "UnknownLab", "get_lab"]
