"""Answers read within a bound. An endpoint can send a body of gigabytes: a learner's machine on
a class network, anything that claims to be AWS or the emulator. Read whole, one such answer
takes the viewer's memory (or the class view's, which follows every learner).

Every HTTP answer the viewer reads goes through `BoundedResponse`: the AWS calls (aiobotocore's
HTTP session, `awsview.aws.tls`) and the emulator's own routes (change feed, journal, queue ages,
doctor), whose sessions are made by `bounded_session()`.
"""

from __future__ import annotations

from typing import Any, TypeVar

import aiohttp
from botocore.exceptions import BotoCoreError

T = TypeVar("T")

MAX_ANSWER = 64 << 20  # bytes: the largest answers asked for (a Scan page of 1 MiB as JSON, a
# page of execution history) are a few MiB
# Pages of one listing, history or scan read in one go; AWS's own ceilings stay well below it (an
# execution's 25,000 events are 250 pages of 100).
MAX_PAGES = 1000


class EndlessListing(BotoCoreError):
    """A listing that goes on past `MAX_PAGES` pages, or hands back the token it was sent."""

    fmt = "{operation}: {why}; the rest not read"


class Pages:
    """One listing's pages as they come: `next()` says the token to send for the next page (None:
    the listing is complete), and raises EndlessListing when the endpoint hands back the token it
    was sent or goes past `MAX_PAGES` pages."""

    def __init__(self, operation: str):
        self.operation = operation
        self.read = 0

    def next(self, sent: object, answered: T | None) -> T | None:
        self.read += 1
        if not answered:
            return None
        if answered == sent:
            raise EndlessListing(
                operation=self.operation, why="the endpoint answered the same page again"
            )
        if self.read >= MAX_PAGES:
            raise EndlessListing(operation=self.operation, why=f"more than {MAX_PAGES} pages")
        return answered


class AnswerTooLarge(BotoCoreError):
    """An endpoint answered more than `MAX_ANSWER` bytes; the rest was not read."""

    fmt = "{url} answered more than {limit} MiB; not read"


class BoundedResponse(aiohttp.ClientResponse):
    """aiohttp's response, whose body is read only up to `MAX_ANSWER` bytes. It fills the body
    aiohttp's own read() keeps (``_body``), which then only releases the connection."""

    async def read(self) -> bytes:
        if self._body is None:
            try:
                self._body = await self._read_bounded()
            except BaseException:
                self.close()
                raise
        return await super().read()  # the body is read: only the connection's release is left

    async def _read_bounded(self) -> bytes:
        declared = self.content_length
        if declared is not None and declared > MAX_ANSWER:
            raise self._too_large()
        chunks, size = [], 0
        async for chunk in self.content.iter_any():
            size += len(chunk)
            if size > MAX_ANSWER:
                raise self._too_large()
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self) -> AnswerTooLarge:
        return AnswerTooLarge(url=str(self.url.with_query(None)), limit=MAX_ANSWER >> 20)


def bounded_session(**kwargs: Any) -> aiohttp.ClientSession:
    """An aiohttp session whose answers are read within the bound."""
    return aiohttp.ClientSession(response_class=BoundedResponse, **kwargs)
