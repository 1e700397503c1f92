"""aiobotocore's HTTP session as AWS View uses it: one TLS context for all the AWS clients of a
process that verify the same way, and answers read within a bound (`awsview.aws.answers`).

aiobotocore builds an SSL context for every client and loads the CA bundle into it (about
0.7 MB and 14 ms each). A viewer opens one client per service, `serve` one per service per
session and the class view one per service per learner: most of the class view's memory per
learner was these copies of the same bundle. A context depends only on what it verifies
against, and an SSL context is made to be shared, so clients that verify alike share one.

This module is the one place that reaches into aiobotocore's HTTP session (two private
methods): if a later aiobotocore no longer calls `_build_ssl_contexts`, every client simply
builds its own context again; `_get_session` is where its aiohttp sessions are made, each given
the bounded response class (tests/aws/test_answer_bound.py fails if that stops working).
"""

from __future__ import annotations

import threading
from typing import Any

from aiobotocore.httpsession import AIOHTTPSession

_contexts: dict[Any, Any] = {}
_lock = threading.Lock()  # contexts are built in a worker thread (aiobotocore's to_thread)


class SharedTLSSession(AIOHTTPSession):
    """aiobotocore's HTTP session, with the verifying SSL context shared by every client that
    verifies against the same bundle (a client certificate or a proxy gets its own, as before),
    and every answer read within `answers.MAX_ANSWER` bytes."""

    async def _get_session(self, proxy_url: Any) -> Any:
        from awsview.aws.answers import BoundedResponse

        session = await super()._get_session(proxy_url)
        session._response_class = BoundedResponse  # what aiohttp's response_class= sets
        return session

    def _build_ssl_contexts(self, proxy_url: Any) -> Any:
        if self._cert_file or proxy_url:
            return super()._build_ssl_contexts(proxy_url)
        key = self._verify  # True (botocore's bundle), False, or a bundle's path
        with _lock:
            context = _contexts.get(key)
            if context is None:
                context = _contexts[key] = self._build_verify_context()
        return context, None
