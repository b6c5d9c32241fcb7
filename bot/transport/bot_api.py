"""The Bot API calls the outbox makes: send, edit, delete, in chat ids, message ids, texts.

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


class Edit(enum.Enum):
    """What became of an edit Telegram answered."""

    EDITED = "edited"
    NOT_MODIFIED = "not modified"
    """The message showed that already: as good as edited."""
    GONE = "gone"
    """Deleted, or too old to edit: only a new message can show the content."""


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
            reason = str(err).lower()
            if "not modified" in reason:
                return Edit.NOT_MODIFIED
            if "not found" in reason or "can't be edited" in reason:
                return Edit.GONE
            raise
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
