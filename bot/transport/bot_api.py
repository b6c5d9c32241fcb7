"""The Bot API calls the outbox makes: send, edit, delete, in chat ids, message ids, texts.

A hand may also be an ephemeral message in a group (Bot API 10.2, newer than PTB 22: sent,
edited and deleted through ``Bot.do_api_request``), addressed by chat, receiver and its
``ephemeral_message_id``.

A new message may go into one topic of a forum (``message_thread_id``, a plain number
here): the parameter is sent only when given, so every other call is as before.

Edits and new messages of the game read Telegram's answer raw (``Bot.do_api_request``):
only a new message's id is used, and ``Bot.edit_message_text`` / ``Bot.send_message`` would
build a whole ``Message`` from it (about 0.7 ms of CPU each, a third of a move's output).
"""

from __future__ import annotations

import datetime as dtm
import enum
import logging
import warnings
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message
from telegram.error import BadRequest, Forbidden, RetryAfter

log = logging.getLogger(__name__)

# The Bot API's method names are case-insensitive (its documentation says so). PTB warns
# callers of ``do_api_request`` that name one of its typed methods (``edit_message_text``,
# ``editMessageText``) to use that method instead; here the raw answer is the point, so
# these calls name methods in a spelling PTB does not define.
RAW_EDIT = "EditMessageText"
RAW_SEND = "SendMessage"
EDIT_EPHEMERAL = "editEphemeralMessageText"
DELETE_EPHEMERAL = "deleteEphemeralMessage"
NOT_ADMIN_ANSWERS = ("BOT_NOT_ADMIN", "CHAT_ADMIN_REQUIRED")
"""Telegram's refusals of an ephemeral message the bot may send only as an admin (the Bot
API's wording, and the Telegram server's that the emulator passes on)."""


class NotAdmin(BadRequest):
    """The bot must be an admin of the group to send this ephemeral message."""


def not_admin(err: BadRequest) -> bool:
    """The one place that reads "the bot is not an admin" out of Telegram's answers."""
    return any(answer.lower() in str(err).lower() for answer in NOT_ADMIN_ANSWERS)


class Edit(enum.Enum):
    """What became of an edit Telegram answered."""

    EDITED = "edited"
    NOT_MODIFIED = "not modified"
    """The message showed that already: as good as edited."""
    GONE = "gone"
    """Deleted, or too old to edit: only a new message can show the content."""
    GIVEN_UP = "given up"
    """Refused, and not tried again (an ephemeral hand: its delivery is not guaranteed
    anyway); the next change edits afresh."""


def message_params(
    chat_id: int,
    text: str,
    markup: InlineKeyboardMarkup | None,
    message_thread_id: int | None = None,
) -> dict[str, Any]:
    """A raw send's or edit's text and keyboard (and a send's topic, when it has one)."""
    params: dict[str, Any] = {"chat_id": chat_id, "text": text, "parse_mode": "HTML"}
    if markup is not None:
        params["reply_markup"] = markup
    params.update(thread(message_thread_id))
    return params


def edit_outcome(err: BadRequest) -> Edit:
    """What a refused edit means: shown already, gone, or (raised) something else."""
    reason = str(err).lower()
    if "not modified" in reason:
        return Edit.NOT_MODIFIED
    if "not found" in reason or "can't be edited" in reason:
        return Edit.GONE
    raise err


def thread(message_thread_id: int | None) -> dict[str, int]:
    """The topic parameter of a new message: none at all outside a topic."""
    return {} if message_thread_id is None else {"message_thread_id": message_thread_id}


def retry_seconds(err: RetryAfter) -> float:
    with warnings.catch_warnings():
        # PTB warns that the type changes to timedelta in a later version; both work here.
        warnings.simplefilter("ignore")
        value = err.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


class BotApi:
    """One bot's calls; errors other than the ones named here reach the caller as raised."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def edit_text(
        self, chat_id: int, message_id: int, text: str, markup: InlineKeyboardMarkup | None
    ) -> Edit:
        """``editMessageText``, its answer left unread."""
        params = message_params(chat_id, text, markup) | {"message_id": message_id}
        try:
            await self.bot.do_api_request(RAW_EDIT, api_kwargs=params)
        except BadRequest as err:
            return edit_outcome(err)
        return Edit.EDITED

    async def send_text(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
        message_thread_id: int | None = None,
    ) -> int:
        """``sendMessage``, reading only the new message's id from the answer."""
        params = message_params(chat_id, text, markup, message_thread_id)
        sent = await self.bot.do_api_request(RAW_SEND, api_kwargs=params)
        return int(sent["message_id"])

    async def send_message(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
        message_thread_id: int | None = None,
    ) -> Message:
        topic: dict[str, Any] = thread(message_thread_id)
        return await self.bot.send_message(
            chat_id, text, parse_mode="HTML", reply_markup=markup, **topic
        )

    async def reply(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
        reply_to: int | None,
        message_thread_id: int | None = None,
    ) -> Message:
        """A message answering ``reply_to`` (sent all the same if that one is gone)."""
        topic: dict[str, Any] = thread(message_thread_id)
        return await self.bot.send_message(
            chat_id,
            text,
            parse_mode="HTML",
            reply_markup=markup,
            reply_to_message_id=reply_to,
            allow_sending_without_reply=True,
            **topic,
        )

    async def delete_message(self, chat_id: int, message_id: int) -> bool:
        """True when deleted; False when Telegram refuses for good (gone already, too old,
        not ours, the chat closed to us). Anything else (a 5xx, the network, a flood
        wait, a timeout) raises, so the delete is tried again: deleting twice is harmless,
        an old hand left in a chat is not."""
        try:
            await self.bot.delete_message(chat_id, message_id)
        except (BadRequest, Forbidden) as err:
            log.debug("could not delete %s/%s: %s", chat_id, message_id, err)
            return False
        return True

    # --- ephemeral messages in a group (one receiver sees them) ----------------------------

    async def send_ephemeral(
        self,
        chat_id: int,
        receiver: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
        callback_query_id: str | None = None,
        message_thread_id: int | None = None,
    ) -> int:
        """``sendMessage`` with ``ephemeral_message_parameters``; the new message's
        ``ephemeral_message_id``. ``callback_query_id``: the receiver's tap it answers (a
        bot that is no admin may send only within 15 s of one): ``NotAdmin`` otherwise."""
        ephemeral: dict[str, Any] = {"receiver_user_id": receiver}
        if callback_query_id is not None:
            ephemeral["callback_query_id"] = callback_query_id
        params = message_params(chat_id, text, markup, message_thread_id) | {
            "ephemeral_message_parameters": ephemeral
        }
        try:
            sent = await self.bot.do_api_request(RAW_SEND, api_kwargs=params)
        except BadRequest as err:
            if not_admin(err):
                raise NotAdmin(err.message) from err
            raise
        return int(sent["ephemeral_message_id"])

    async def edit_ephemeral(
        self,
        chat_id: int,
        receiver: int,
        ephemeral_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
    ) -> Edit:
        """``editEphemeralMessageText`` (True whether or not the receiver's app gets it)."""
        params = message_params(chat_id, text, markup) | {
            "receiver_user_id": receiver,
            "ephemeral_message_id": ephemeral_id,
        }
        try:
            await self.bot.do_api_request(EDIT_EPHEMERAL, api_kwargs=params)
        except BadRequest as err:
            return edit_outcome(err)
        return Edit.EDITED

    async def delete_ephemeral(self, chat_id: int, receiver: int, ephemeral_id: int) -> bool:
        """``deleteEphemeralMessage``: True when deleted, False when refused for good."""
        params = {
            "chat_id": chat_id,
            "receiver_user_id": receiver,
            "ephemeral_message_id": ephemeral_id,
        }
        try:
            await self.bot.do_api_request(DELETE_EPHEMERAL, api_kwargs=params)
        except (BadRequest, Forbidden) as err:
            log.debug("could not delete ephemeral %s/%s: %s", chat_id, ephemeral_id, err)
            return False
        return True
