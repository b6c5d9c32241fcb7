"""The Bot API client, counting every call by method and outcome for ``/metrics``.

Counting where the HTTP request is made catches every call (sends, edits, answers, menus)
without a line at each call site.
"""

from __future__ import annotations

from telegram.error import NetworkError
from telegram.request import HTTPXRequest, RequestData
from telegram.request._baserequest import BaseRequest

from bot import metrics

_DEFAULT = BaseRequest.DEFAULT_NONE


def outcome_of(status: int) -> str:
    if 200 <= status < 300:
        return "ok"
    if status == 429:
        return "retry_after"
    if 400 <= status < 500:
        return "bad_request"
    return "error"


class MeteredRequest(HTTPXRequest):
    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: float | object | None = _DEFAULT,
        write_timeout: float | object | None = _DEFAULT,
        connect_timeout: float | object | None = _DEFAULT,
        pool_timeout: float | object | None = _DEFAULT,
    ) -> tuple[int, bytes]:
        api_method = url.rsplit("/", 1)[-1]
        try:
            status, payload = await super().do_request(
                url,
                method,
                request_data,
                read_timeout=read_timeout,  # type: ignore[arg-type]
                write_timeout=write_timeout,  # type: ignore[arg-type]
                connect_timeout=connect_timeout,  # type: ignore[arg-type]
                pool_timeout=pool_timeout,  # type: ignore[arg-type]
            )
        except NetworkError:  # TimedOut included: the call may or may not have happened
            metrics.api_call(api_method, "network")
            raise
        metrics.api_call(api_method, outcome_of(status))
        return status, payload
