"""What the handlers share: their services, the reply language, toasts, membership, and
the one function that says which place (``bot.domain.place``) an update is in."""

from __future__ import annotations

import logging
import time
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from telegram import CallbackQuery, Chat, Update, User
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

from bot.app.games import Games
from bot.app.reviews import Reviews
from bot.domain.flow import Person
from bot.domain.place import Place
from bot.render import Rendered
from locales import Translator

log = logging.getLogger(__name__)
ADMIN_CACHE_SECONDS = 60.0
_MEMBER_STATUSES = (
    ChatMemberStatus.MEMBER,
    ChatMemberStatus.ADMINISTRATOR,
    ChatMemberStatus.OWNER,
    ChatMemberStatus.RESTRICTED,
)


@dataclass(frozen=True)
class LinkToast:
    """A toast key whose answer also opens ``url`` (a t.me deep link, which Telegram
    allows in any callback answer) in one tap."""

    key: str
    url: str


@dataclass(frozen=True)
class Said:
    """A toast already written in the tapper's language (it names what they changed)."""

    text: str


Toast = str | LinkToast | Said | None
"""What a tap's handler answers: a toast key, one with a link, a text, or nothing."""


class Members:
    """Who is a member or an admin of a group, as Telegram says (admins remembered for
    ``ADMIN_CACHE_SECONDS``: a tap must not wait for Telegram every time)."""

    def __init__(self, admins: MutableMapping[tuple[int, int], tuple[float, bool]]) -> None:
        self.admins = admins

    async def is_admin(self, chat_id: int, user_id: int, bot: Any) -> bool:
        cached = self.admins.get((chat_id, user_id))
        now = time.monotonic()
        if cached is not None and now - cached[0] < ADMIN_CACHE_SECONDS:
            return cached[1]
        try:
            member = await bot.get_chat_member(chat_id, user_id)
            admin = member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)
        except TelegramError:
            admin = False
        self.admins[(chat_id, user_id)] = (now, admin)
        return admin

    async def is_member(self, chat_id: int, user_id: int, bot: Any) -> bool:
        try:
            member = await bot.get_chat_member(chat_id, user_id)
        except TelegramError:
            return False
        return bool(member.status in _MEMBER_STATUSES)


@dataclass(frozen=True)
class Services:
    """What every handler may use."""

    games: Games
    members: Members
    reviews: Reviews | None = None
    """The Hard player's reviews of finished games (None: not offered)."""

    def say(self, place: Place, text: str, reply_to: int | None = None) -> None:
        """A new message into ``place`` (where the update came from: ``place_of``)."""
        self.games.box.say(place, Rendered(text), reply_to=reply_to)

    def tell(self, user_id: int, text: str) -> None:
        """A new message in the user's private chat (wherever the update came from)."""
        self.games.box.tell(user_id, Rendered(text))

    async def reply_language(self, chat: Chat, user: User | None) -> Translator:
        """The language of a command's reply in ``chat`` (see ``bot.app.language``)."""
        private = chat.type == ChatType.PRIVATE
        return await self.games.languages.reply(
            chat.id,
            private=private,
            user_id=chat.id if private else (user.id if user else None),
            telegram_lang=user.language_code if user else None,
        )

    async def own_language(self, user: User) -> Translator:
        """What ``user`` alone reads (a toast, their private chat)."""
        return await self.games.languages.person(user.id, user.language_code)


def place_of(update: Update) -> Place | None:
    """The place an update is in: where its game lives and its replies go (None: no
    chat). The one place that decides it: every handler asks here, none builds a place
    from a chat id. A message in a forum topic (``is_topic_message``, as Telegram marks
    them) is in that topic: a command by its own message, a tap by the message tapped;
    a forum's General topic, and every chat without topics, stay topic None. (A reply
    thread in a group without topics also has a ``message_thread_id``, but is no topic.)"""
    chat = update.effective_chat
    if chat is None:
        return None
    message = update.effective_message
    thread = message.message_thread_id if message is not None else None
    if message is None or not message.is_topic_message or thread is None or thread <= 1:
        return Place(chat.id)
    return Place(chat.id, thread)


def topic_name(update: Update) -> str:
    """The name of the forum topic an update's message is in, as far as the message says:
    in a topic, a message that answers nothing in particular replies to the topic's first
    message, its ``forum_topic_created`` (empty: not known, e.g. an explicit reply)."""
    message = update.effective_message
    if message is None or not message.is_topic_message:
        return ""
    replied = message.reply_to_message
    created = replied.forum_topic_created if replied is not None else None
    return created.name if created is not None else ""


def person(user: User, lang: str) -> Person:
    return Person(user.id, user.full_name or user.first_name or str(user.id), lang)


def is_private(chat: Chat) -> bool:
    return chat.type == ChatType.PRIVATE


async def answer(query: CallbackQuery, text: str | None, url: str | None = None) -> None:
    """Answer the tap; the change is already stored, so a failed answer only costs
    the spinner (Telegram times it out)."""
    try:
        await query.answer(text, url=url)
    except TelegramError as err:
        log.info("could not answer a callback query: %s", err)
