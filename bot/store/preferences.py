"""Chat settings and user records: small preferences, and each reader's language.

Both expire when unused; every read renews them (GETEX). An unreadable one is logged and
replaced by the defaults: it holds no game, and its owner simply chooses again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import ValidationError

from bot.domain.bounded import BoundedDict
from bot.domain.records import ChatSettings, UserRecord
from bot.domain.schema import UnreadableRecord, current_json
from bot.ops import metrics
from bot.store.keys import settings_key, user_key
from bot.store.transactions import Lifetimes, Transactions

log = logging.getLogger(__name__)
LANGUAGE_CACHE_SECONDS = 10.0
LANGUAGES_KEPT = 20_000

M = TypeVar("M", ChatSettings, UserRecord)
ReadPreferences = Callable[[int], Awaitable[ChatSettings | UserRecord]]


class Preferences:
    """Chat settings, user records, and a brief cache of each one's language."""

    def __init__(self, db: Transactions, lives: Lifetimes) -> None:
        self._db = db
        self._ttl = lives.settings
        self._languages: BoundedDict[str, tuple[str | None, float]] = BoundedDict(LANGUAGES_KEPT)
        """Settings or user key -> (language, remembered until): see ``language``."""

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        raw = await self._db.redis.getex(settings_key(chat_id), ex=self._ttl)
        return _parse(ChatSettings, raw) or ChatSettings()

    async def save_chat_settings(self, chat_id: int, settings: ChatSettings) -> None:
        self._languages.pop(settings_key(chat_id), None)
        await self._db.redis.set(settings_key(chat_id), settings.to_json(), ex=self._ttl)

    async def init_chat_lang(self, chat_id: int, lang: str) -> bool:
        """Store ``lang`` as the chat's language if it has no settings yet: true if so."""
        key = settings_key(chat_id)
        fresh = ChatSettings(lang=lang).to_json()
        if await self._db.redis.set(key, fresh, nx=True, ex=self._ttl):
            self._languages.pop(key, None)
            return True
        return False

    async def user(self, user_id: int) -> UserRecord:
        raw = await self._db.redis.getex(user_key(user_id), ex=self._ttl)
        return _parse(UserRecord, raw) or UserRecord()

    async def save_user(self, user_id: int, record: UserRecord) -> None:
        self._languages.pop(user_key(user_id), None)
        await self._db.redis.set(
            user_key(user_id), record.model_dump_json(by_alias=True), ex=self._ttl
        )

    async def language(self, key: str, read: ReadPreferences, of: int) -> str | None:
        """The language of the record at ``key``, read with ``read(of)``. Every message
        rendered needs its reader's language: remembered for a few seconds, so a move's
        renders cost no read each. A change made through this process shows at once; one
        made through another worker within ``LANGUAGE_CACHE_SECONDS``."""
        now = time.monotonic()
        known = self._languages.get(key)
        if known is not None and known[1] > now:
            return known[0]
        lang = (await read(of)).lang
        self._languages[key] = (lang, now + LANGUAGE_CACHE_SECONDS)
        return lang


def read_chat_settings(raw: bytes | str | None) -> ChatSettings:
    """Stored chat settings (``raw`` as read): the defaults when absent or unreadable."""
    return _parse(ChatSettings, raw) or ChatSettings()


def _parse(model: type[M], raw: bytes | str | None) -> M | None:
    """A record of ``model``, or None if absent or unreadable (logged)."""
    if raw is None:
        return None
    try:
        return model.model_validate_json(current_json(model.__name__, raw))
    except (UnreadableRecord, ValidationError):
        log.exception("unreadable %s record; using the defaults", model.__name__)
        metrics.quarantined(model.__name__)
        return None
