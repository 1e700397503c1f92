"""Plays a lab against an endpoint: what exists before, then the learner's steps in order."""

from __future__ import annotations

from collections.abc import Callable

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)

from awsview.aws.errors import NOT_FOUND_CODES
from awsview.labs.context import LabContext
from awsview.labs.model import Lab, LabError, Step

UNREACHABLE = (
    EndpointConnectionError,
    ConnectTimeoutError,
    ReadTimeoutError,
    ConnectionClosedError,
)


class LabPlayer:
    """Performs a lab's commands with boto3, each step deriving what it needs from the endpoint.

    endpoint_url, region and profile None leave each to the SDK's configuration (environment,
    shared config, the standard credential chain); raises ConfigError if that cannot work.
    """

    def __init__(
        self,
        lab: Lab | str,
        endpoint_url: str | None = None,
        region: str | None = None,
        log: Callable[[str], None] = print,
        profile: str | None = None,
    ):
        if isinstance(lab, str):
            from awsview.labs import get_lab

            lab = get_lab(lab)
        self.lab = lab
        self.log = log
        self._label = lab.name
        self.context = LabContext(endpoint_url, region, self._say, profile=profile)

    def setup(self) -> None:
        """Create the lab's provided resources; existing ones are reused."""
        self._perform("setup", self.lab.provide)

    def play(self, until: int | str | None = None, only: int | str | None = None) -> list[str]:
        """Perform the learner's steps in order, stopping after `until`; or just `only`.

        Returns the keys of the steps performed.
        """
        if only is not None:
            if until is not None:
                raise LabError("play() takes until or only, not both")
            steps = [self.lab.step(only)]
        else:
            last = len(self.lab.steps) if until is None else self.lab.number(self.lab.step(until))
            steps = list(self.lab.steps[:last])
        for step in steps:
            self._play_step(step)
        return [step.key for step in steps]

    def clean(self) -> None:
        """The lab's cleanup step only."""
        self._play_step(self.lab.step("cleanup"))

    def _play_step(self, step: Step) -> None:
        label = f"{self.lab.number(step)}/{len(self.lab.steps)} {step.key}"
        try:
            self._perform(label, step.run, step.title)
        except LabError as error:
            cause = error.__cause__
            if (
                step.key != "cleanup"
                and isinstance(cause, ClientError)
                and cause.response.get("Error", {}).get("Code") in NOT_FOUND_CODES
            ):
                # Most often the lab's provided resources were never set up (or an emulator
                # restarted without them): say the command that makes them.
                raise LabError(
                    f"{error} — are the lab's provided resources there? "
                    f"`awsview lab setup {self.lab.name}` creates them"
                ) from cause
            raise

    def _perform(self, label: str, run: Callable[[LabContext], None], title: str = "") -> None:
        self._label = f"{self.lab.name} {label}"
        if title:
            self._say(title)
        try:
            run(self.context)
        except LabError as error:
            raise LabError(f"{self._label}: {_one_line(error)}") from error
        except ClientError as error:
            detail = error.response.get("Error", {})
            raise LabError(
                f"{self._label}: {error.operation_name} failed: "
                f"{detail.get('Code', '?')}: {_one_line(detail.get('Message', ''))}"
            ) from error
        except UNREACHABLE as error:
            where = self.context.endpoint_url or "AWS"
            raise LabError(f"{self._label}: cannot reach {where}: {_one_line(error)}") from error
        except NoCredentialsError as error:
            raise LabError(
                f"{self._label}: no AWS credentials found (set a profile, or "
                "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)"
            ) from error
        except BotoCoreError as error:
            raise LabError(f"{self._label}: {_one_line(error)}") from error
        finally:
            self._label = self.lab.name

    def _say(self, message: str) -> None:
        self.log(f"{self._label}: {message}")


def _one_line(error: object) -> str:
    return " ".join(str(error).split())
