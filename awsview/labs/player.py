"""Plays a lab folder against an endpoint from Python: its ``setup.sh`` (what the VM provides),
then the learner's steps, each in bash with the AWS CLI (awsview.labs.script), as ``awsview lab
play`` does. The commands, `awsview demo`, the docs capture and the tests use it.

One player is one lab VM: its scratch home (the lab's assets, the files a step writes for a later
one) lives as long as the player, so steps can be played one at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from awsview.labs.definition import Lab, LabError
from awsview.labs.script import STEP_TIMEOUT, Workspace

DEFAULT_REGION = "us-east-1"


class LabPlayer:
    """Performs a lab folder's commands on ``endpoint_url`` (None: the AWS the shell's
    configuration reaches; the CLI refuses that without --real-account before it gets here).

    ``log`` gets each line the commands print, once the step or setup has run."""

    def __init__(
        self,
        lab: Lab | str | Path,
        endpoint_url: str | None = None,
        region: str | None = None,
        log: Callable[[str], None] = print,
        isolated: bool = False,
        local: bool = True,
    ):
        self._workspace: Workspace | None = None  # first: __del__ runs even when get_lab raised
        if not isinstance(lab, Lab):
            from awsview.labs import get_lab

            lab = get_lab(lab)
        self.lab = lab
        self.log = log
        self.endpoint_url = endpoint_url
        self._region = region or DEFAULT_REGION
        self._isolated, self._local = isolated, local

    @property
    def workspace(self) -> Workspace:
        """The lab's VM, made on first use (its assets copied under a scratch home)."""
        if self._workspace is None:
            try:
                self._workspace = Workspace(
                    self.lab.folder,
                    self.endpoint_url or "",
                    self._region,
                    isolated=self._isolated,
                    local=self._local,
                )
            except FileNotFoundError as exc:
                raise LabError(f"{self.lab.name}: {exc}") from exc
        return self._workspace

    def close(self) -> None:
        """Remove the scratch home (nothing on the endpoint is touched)."""
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None

    def __enter__(self) -> LabPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def setup(self) -> None:
        """Run the lab's ``setup.sh`` (nothing when it has none)."""
        background = self.lab.folder.background
        if background:
            self._run(self.workspace.script(background), "setup.sh", f"{self.lab.name} setup")

    def play(self, until: int | str | None = None, only: int | str | None = None) -> list[str]:
        """Perform the learner's steps in order, stopping after ``until`` (a number or a key);
        or just ``only``. Returns the keys of the steps performed."""
        from awsview.labs.script import step_commands

        if only is not None:
            if until is not None:
                raise LabError("play() takes until or only, not both")
            numbers = [self.lab.step(only).number]
        else:
            last = len(self.lab.steps) if until is None else self.lab.step(until).number
            numbers = list(range(1, last + 1))
        played = []
        for number in numbers:
            step = self.lab.folder.steps[number - 1]
            commands, _ = step_commands(self.lab.folder, step)
            label = f"{self.lab.name} step {number}/{len(self.lab.steps)} {step.key}"
            try:
                self._run(commands, f"step{number}.sh", label)
            except LabError as error:
                if step.key == "cleanup" or not _not_found(str(error)):
                    raise
                # Most often the lab's provided resources were never set up (or an emulator
                # restarted without them): say the command that makes them.
                raise LabError(
                    f"{error} — are the lab's provided resources there? "
                    f"`awsview lab setup {self.lab.name}` creates them"
                ) from error
            played.append(step.key)
        return played

    def clean(self) -> None:
        """The lab's cleanup step only (its step keyed ``cleanup``)."""
        self.play(only="cleanup")

    def _run(self, commands: str, name: str, label: str) -> None:
        outcome = self.workspace.run(commands, name, STEP_TIMEOUT)
        for line in outcome.output.splitlines():
            self.log(f"{label}: {line}")
        if not outcome.ok:
            raise LabError(f"{label}: {outcome.said()}")


def _not_found(said: str) -> bool:
    """Whether a failed command's last line is AWS saying a resource does not exist."""
    from awsview.aws.errors import NOT_FOUND_CODES

    return any(f"({code})" in said for code in NOT_FOUND_CODES | {"NoSuchEntity"})
