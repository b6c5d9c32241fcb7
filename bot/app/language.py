"""The one place that decides which language a reply is in.

* A group's messages: the language chosen there with /language (set from the first
  caller's Telegram language when the group had none).
* Whatever one person alone reads (a private chat, a toast, their hand, the Mini App):
  the language they chose with /language in private, else their Telegram language.

The choices live in the storage, which remembers them for a few seconds (the one cache:
every message rendered needs its reader's language).
"""

from __future__ import annotations

import asyncio

from redis.exceptions import RedisError

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.render import Rendered
from bot.store.storage import Storage
from locales import Translator, language_name, negotiate, translator


class Languages:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def group(self, chat_id: int) -> Translator:
        """A group's language, as chosen there (the default when none was)."""
        return translator(negotiate(await self.storage.chat_language(chat_id)))

    async def person(self, user_id: int | None, *fallbacks: str | None) -> Translator:
        """One person's language: their /language choice, else the first known of
        ``fallbacks`` (their Telegram language, or the one their seat was taken in)."""
        chosen = await self.storage.user_language(user_id) if user_id is not None else None
        return translator(negotiate(chosen or next((f for f in fallbacks if f), None)))

    async def reply(
        self, chat_id: int, *, private: bool, user_id: int | None, telegram_lang: str | None
    ) -> Translator:
        """A command's reply in ``chat_id``: the person's language in private; in a group
        its language, which the first caller's Telegram language sets."""
        if private:
            return await self.person(user_id, telegram_lang)
        first = negotiate(telegram_lang)
        return translator(await self.storage.init_chat_lang(chat_id, first))

    async def person_if_reachable(
        self, user_id: int, telegram_lang: str | None, *, wait: float
    ) -> Translator:
        """For answers while Redis may be away: the person's choice if the storage knows
        it within ``wait`` seconds (remembered, or read), else their Telegram language."""
        try:
            async with asyncio.timeout(wait):
                return await self.person(user_id, telegram_lang)
        except (RedisError, TimeoutError):
            return translator(negotiate(telegram_lang))

    # --- changing the choice --------------------------------------------------------------

    async def choose_for_person(self, user_id: int, lang: str) -> Rendered:
        """/language in private: the confirmation, in the new language."""
        record = await self.storage.user(user_id)
        record.lang = lang
        await self.storage.save_user(user_id, record)
        return confirmation(lang)

    async def choose_for_group(self, place: Place, lang: str) -> tuple[ChatGame | None, Rendered]:
        """/language in a group (its admins only: the caller checks), asked at ``place``.
        The language is the group's (every place of it); also the place's game as it was
        read before the change: its messages must be shown again."""
        game = await self.storage.load_table(place)
        chat_id = place.chat_id
        settings = await self.storage.chat_settings(chat_id)
        settings.lang = lang
        await self.storage.save_chat_settings(chat_id, settings)
        return game, confirmation(lang)


def confirmation(lang: str) -> Rendered:
    """ "Language set", in the language just chosen."""
    return Rendered(translator(lang).t("language.set", language=language_name(lang)))
