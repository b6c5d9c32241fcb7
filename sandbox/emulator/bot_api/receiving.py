"""getMe and how a bot receives updates: getUpdates (long polling) or a webhook."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any
from urllib.parse import urlsplit

from sandbox.emulator.errors import ERR_POLL_CONFLICT, ERR_WEBHOOK_ACTIVE, ApiError
from sandbox.emulator.httputil import is_loopback
from sandbox.emulator.models import EmuBot, Webhook
from sandbox.emulator.params import Params
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World


async def get_me(w: World, b: EmuBot, p: Params) -> Any:
    return {
        **b.user.to_api(),
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": False,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


def _set_allowed_updates(b: EmuBot, p: Params) -> None:
    # One setting per bot, changed by getUpdates or setWebhook when they pass it.
    allowed = p.get_json("allowed_updates")
    if isinstance(allowed, list):
        b.allowed_updates = [str(kind) for kind in allowed] or None


async def get_updates(w: World, b: EmuBot, p: Params) -> Any:
    if b.webhook is not None:
        raise ApiError(409, ERR_WEBHOOK_ACTIVE)
    offset = p.get_int("offset")
    limit = min(100, max(1, p.get_int("limit") or 100))
    timeout = max(0.0, p.get_float("timeout") or 0.0)
    _set_allowed_updates(b, p)
    # Like Telegram, a newer getUpdates terminates an older one still waiting.
    b.poll_generation += 1
    generation = b.poll_generation
    b.poke()
    w.updates.confirm(b, offset)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if generation != b.poll_generation:
            raise ApiError(409, ERR_POLL_CONFLICT)
        if b.webhook is not None:
            raise ApiError(409, ERR_WEBHOOK_ACTIVE)
        if b.updates or w.closing:
            return copy.deepcopy(b.updates[:limit])
        remaining = deadline - loop.time()
        if remaining <= 0:
            return []
        wake = b.wake
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), remaining)


async def set_webhook(w: World, b: EmuBot, p: Params) -> Any:
    url = p.get_str("url") or ""
    if p.get_bool("drop_pending_updates"):
        b.updates.clear()
    if not url:
        return await delete_webhook(w, b, p)
    parts = urlsplit(url)
    # Telegram wants HTTPS; plain HTTP is accepted for loopback so tests need no TLS.
    if parts.scheme != "https" and not (
        parts.scheme == "http" and is_loopback(parts.hostname or "")
    ):
        raise ApiError(400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
    _set_allowed_updates(b, p)
    max_connections = p.get_int("max_connections") or 40
    if not 1 <= max_connections <= 100:
        raise ApiError(400, "Bad Request: bad webhook: max_connections must be in 1..100")
    hook = Webhook(
        url=url,
        secret_token=p.get_str("secret_token") or None,
        max_connections=max_connections,
        allowed_updates=b.allowed_updates,
    )
    current = b.webhook
    if current is None or (current.url, current.secret_token, current.max_connections) != (
        hook.url,
        hook.secret_token,
        hook.max_connections,
    ):
        b.webhook = hook
    else:
        current.allowed_updates = b.allowed_updates
    b.poke()  # a waiting getUpdates must now fail with the webhook conflict
    w.webhooks.start(b)
    return True


async def delete_webhook(w: World, b: EmuBot, p: Params) -> Any:
    b.webhook = None
    w.webhooks.stop(b)
    if p.get_bool("drop_pending_updates"):
        b.updates.clear()
    return True


async def get_webhook_info(w: World, b: EmuBot, p: Params) -> Any:
    info: JsonDict = {"url": "", "has_custom_certificate": False}
    if b.webhook is not None:
        info.update(b.webhook.info())
    info["pending_update_count"] = len(b.updates)
    return info


async def ok_true(w: World, b: EmuBot, p: Params) -> Any:
    return True
