"""The Bot API client: PTB's requests over aiohttp, each call counted for ``/metrics``.

Why not PTB's default (HTTPX): under load its connection pool (httpcore) queued calls
behind one another. With 200 busy groups the bot's own answers to taps waited 0.7 s at
the 90th percentile and 2.5 s at the 99th, while the emulator answered each in under 50 ms.
Each call also cost more CPU. aiohttp, which the bot already uses for its web servers,
does the same job without either problem (``bench/bot_load.py``).

Counting here, where the HTTP request is made, catches every call (sends, edits, answers,
menus) without a line at each call site.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.ops import metrics

_DEFAULT = BaseRequest.DEFAULT_NONE


class NotSent(Exception):
    """The cause of a ``TimedOut`` raised before the request left (no free connection,
    or none could be opened): Telegram cannot have carried it out."""


def outcome_of(status: int) -> str:
    if 200 <= status < 300:
        return "ok"
    if status == 429:
        return "retry_after"
    if 400 <= status < 500:
        return "bad_request"
    return "error"


class MeteredRequest(BaseRequest):
    __slots__ = ("_connect", "_pool_size", "_read", "_session", "_write")

    def __init__(
        self,
        *,
        connection_pool_size: int,
        read_timeout: float | None,
        write_timeout: float | None,
        connect_timeout: float | None,
    ) -> None:
        self._pool_size = connection_pool_size
        self._read = read_timeout
        self._write = write_timeout
        self._connect = connect_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size),
                headers={"User-Agent": self.USER_AGENT},
            )

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = _DEFAULT,
        write_timeout: ODVInput[float] = _DEFAULT,
        connect_timeout: ODVInput[float] = _DEFAULT,
        pool_timeout: ODVInput[float] = _DEFAULT,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("the Bot API client is not initialized")
        # Method names are case-insensitive; the outbox spells some with a capital (see
        # bot.transport.bot_api.RAW_EDIT): one label per method, as the Bot API documents it.
        api_method = url.rsplit("/", 1)[-1]
        api_method = api_method[:1].lower() + api_method[1:]
        read = self._read if isinstance(read_timeout, DefaultValue) else read_timeout
        write = self._write if isinstance(write_timeout, DefaultValue) else write_timeout
        connect = self._connect if isinstance(connect_timeout, DefaultValue) else connect_timeout
        pool = self._connect if isinstance(pool_timeout, DefaultValue) else pool_timeout
        # aiohttp's ``connect`` covers waiting for a pooled connection and opening one.
        waiting = None if connect is None and pool is None else (connect or 0) + (pool or 0)
        reading = None if read is None and write is None else max(read or 0, write or 0)
        timeout = aiohttp.ClientTimeout(total=None, connect=waiting, sock_read=reading)
        try:
            async with self._session.request(
                method, url, data=_body(request_data), timeout=timeout
            ) as response:
                status, payload = response.status, await response.read()
        except aiohttp.ConnectionTimeoutError as err:
            metrics.api_call(api_method, "network")
            raise TimedOut("no connection to the Bot API in time") from NotSent(str(err))
        except TimeoutError as err:  # sent; the answer did not come
            metrics.api_call(api_method, "network")
            raise TimedOut from err
        except aiohttp.ClientError as err:
            metrics.api_call(api_method, "network")
            raise NetworkError(f"aiohttp.{type(err).__name__}: {err}") from err
        metrics.api_call(api_method, outcome_of(status))
        return status, payload


def _body(request_data: RequestData | None) -> Any:
    """Form fields as PTB encodes them (JSON values), multipart when files go along."""
    if request_data is None:
        return None
    fields = request_data.json_parameters
    if not request_data.contains_files:
        return fields
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for name, upload in request_data.multipart_data.items():
        filename, content, *rest = upload
        form.add_field(name, content, filename=filename, content_type=rest[0] if rest else None)
    return form
