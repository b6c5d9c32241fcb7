"""Telegram Mini App init data: checked exactly as Telegram documents it.

The client hands the page ``initData``: a URL-encoded query string whose ``hash`` is
HMAC-SHA256 over the other fields, sorted by key and written as ``key=value`` lines,
keyed with HMAC-SHA256(key ``"WebAppData"``, bot token). Only someone holding the bot
token can make one, so a valid ``hash`` proves the ``user`` field came from Telegram.

Written with ``hmac``/``hashlib`` rather than a library: the check is a dozen lines,
the libraries that offer it bring a whole bot framework (aiogram) or are small and
rarely updated, and we also need the signing side for tests and the sandbox.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

CLOCK_SKEW = 60.0
"""Seconds an ``auth_date`` may lie in the future (clocks of client and server differ)."""


class InitDataError(ValueError):
    """Init data that must not be trusted: missing, malformed, forged or too old."""


@dataclass(frozen=True)
class WebAppUser:
    """Who opened the app, as Telegram signed it."""

    user_id: int
    first_name: str
    last_name: str
    username: str
    language_code: str | None
    auth_date: int
    start_param: str | None

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip() or str(self.user_id)


def secret_key(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def data_check_string(fields: Mapping[str, str]) -> str:
    return "\n".join(f"{key}={fields[key]}" for key in sorted(fields) if key != "hash")


def signature(fields: Mapping[str, str], bot_token: str) -> str:
    check = data_check_string(fields).encode()
    return hmac.new(secret_key(bot_token), check, hashlib.sha256).hexdigest()


def sign(fields: Mapping[str, str], bot_token: str) -> str:
    """Init data for ``fields`` as Telegram makes it (tests, the sandbox)."""
    plain = {k: v for k, v in fields.items() if k != "hash"}
    return urlencode({**plain, "hash": signature(plain, bot_token)})


def make_init_data(
    bot_token: str,
    user_id: int,
    first_name: str,
    *,
    auth_date: int,
    language_code: str | None = None,
    start_param: str | None = None,
) -> str:
    """Signed init data for one user, with the fields Telegram sends."""
    user: dict[str, object] = {"id": user_id, "first_name": first_name}
    if language_code:
        user["language_code"] = language_code
    fields = {
        "user": json.dumps(user, ensure_ascii=False, separators=(",", ":")),
        "auth_date": str(auth_date),
        "query_id": f"AA{user_id:x}{auth_date:x}",
    }
    if start_param:
        fields["start_param"] = start_param
    return sign(fields, bot_token)


def parse_fields(init_data: str) -> dict[str, str]:
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError as err:
        raise InitDataError("not a query string") from err
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise InitDataError("a field appears twice")
    return fields


def validate(init_data: str | None, bot_token: str, *, max_age: float, now: float) -> WebAppUser:
    """The user of valid, fresh init data; ``InitDataError`` for anything else."""
    if not init_data:
        raise InitDataError("no init data")
    fields = parse_fields(init_data)
    given = fields.get("hash", "")
    if not hmac.compare_digest(given.encode(), signature(fields, bot_token).encode()):
        raise InitDataError("hash does not match")
    try:
        auth_date = int(fields["auth_date"])
    except (KeyError, ValueError) as err:
        raise InitDataError("no auth_date") from err
    if now - auth_date > max_age:
        raise InitDataError("expired")
    if auth_date - now > CLOCK_SKEW:
        raise InitDataError("auth_date in the future")
    return _user(fields, auth_date)


def _user(fields: Mapping[str, str], auth_date: int) -> WebAppUser:
    try:
        user = json.loads(fields["user"])
        user_id = user["id"]
    except (KeyError, ValueError, TypeError) as err:
        raise InitDataError("no user") from err
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        raise InitDataError("bad user id")
    lang = user.get("language_code")
    return WebAppUser(
        user_id=user_id,
        first_name=str(user.get("first_name", "")),
        last_name=str(user.get("last_name", "")),
        username=str(user.get("username", "")),
        language_code=lang if isinstance(lang, str) else None,
        auth_date=auth_date,
        start_param=fields.get("start_param"),
    )
