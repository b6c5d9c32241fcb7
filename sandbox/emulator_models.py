"""Data model of the Bot API emulator: users, chats, messages, bots, errors, parameters."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.emulator_html import entities_to_html

JsonDict = dict[str, Any]

# Telegram's exact error texts; bots match on them, so they must not drift.
ERR_UNAUTHORIZED = "Unauthorized"
ERR_NOT_FOUND = "Not Found"
ERR_CHAT_NOT_FOUND = "Bad Request: chat not found"
ERR_CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
ERR_BLOCKED = "Forbidden: bot was blocked by the user"
ERR_BOT_TO_BOT = "Forbidden: bot can't send messages to bots"
ERR_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
ERR_EDIT_NOT_FOUND = "Bad Request: message to edit not found"
ERR_DELETE_NOT_FOUND = "Bad Request: message to delete not found"
ERR_CANT_EDIT = "Bad Request: message can't be edited"
ERR_CANT_DELETE = "Bad Request: message can't be deleted"
ERR_TEXT_EMPTY = "Bad Request: message text is empty"
ERR_TOO_LONG = "Bad Request: message is too long"
ERR_BUTTON_DATA = "Bad Request: BUTTON_DATA_INVALID"
ERR_PARSE_ENTITIES = "Bad Request: can't parse entities: "
ERR_QUERY_INVALID = (
    "Bad Request: query is too old and response timeout expired or query ID is invalid"
)
ERR_REPLY_NOT_FOUND = "Bad Request: message to be replied not found"
ERR_MARKUP_JSON = "Bad Request: can't parse reply keyboard markup JSON object"
ERR_TEXT_BUTTONS = (
    "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the "
    "inline keyboard"
)
ERR_WEBHOOK_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to "
    "delete the webhook first"
)
ERR_POLL_CONFLICT = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance "
    "is running"
)
ERR_PIN_RIGHTS = "Bad Request: not enough rights to manage pinned messages in the chat"
MAX_TEXT_LENGTH = 4096
MAX_CALLBACK_DATA_BYTES = 64


class ApiError(Exception):
    """A Bot API failure, rendered exactly as Telegram renders it."""

    def __init__(self, error_code: int, description: str, retry_after: int | None = None):
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after

    def to_json(self) -> JsonDict:
        body: JsonDict = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


def too_many_requests(retry_after: int) -> ApiError:
    return ApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)


class EmulatorError(Exception):
    """A control-API call that cannot happen in Telegram (unknown user, missing button, ...)."""


class NotFound(EmulatorError):
    """A control-API call naming something that does not exist (answered with 404)."""


@dataclass
class EmuUser:
    """A Telegram account: a person or a bot."""

    id: int
    first_name: str
    is_bot: bool = False
    username: str | None = None
    last_name: str | None = None
    language_code: str | None = "en"

    def to_api(self) -> JsonDict:
        data: JsonDict = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code and not self.is_bot:
            data["language_code"] = self.language_code
        return data


@dataclass
class EmuMessage:
    """One message as the emulator stores it (the current state after edits).

    ``text`` is the visible text, ``html`` the raw text as the bot sent it.
    """

    message_id: int
    chat_id: int
    chat_type: str
    date: int
    sender: EmuUser
    text: str
    html: str
    parse_mode: str | None = None
    entities: list[JsonDict] = field(default_factory=list)
    reply_markup: JsonDict | None = None
    bot_id: int | None = None  # the bot whose private chat this is; None in groups
    reply_to_message_id: int | None = None
    edit_count: int = 0
    edit_date: int | None = None
    deleted: bool = False
    extra: JsonDict = field(default_factory=dict)  # service fields, e.g. new_chat_members

    @property
    def from_bot(self) -> bool:
        return self.sender.is_bot

    @property
    def inline_keyboard(self) -> list[list[JsonDict]]:
        if not self.reply_markup:
            return []
        rows = self.reply_markup.get("inline_keyboard")
        return rows if isinstance(rows, list) else []

    @property
    def buttons(self) -> list[list[JsonDict]]:
        """Inline keyboard as rows of ``{text, callback_data}`` / ``{text, url}``."""
        rows: list[list[JsonDict]] = []
        for row in self.inline_keyboard:
            out_row: list[JsonDict] = []
            for button in row:
                item: JsonDict = {"text": button.get("text", "")}
                for key in ("callback_data", "url"):
                    if key in button:
                        item[key] = button[key]
                out_row.append(item)
            rows.append(out_row)
        return rows

    @property
    def button_texts(self) -> list[str]:
        return [str(b.get("text", "")) for row in self.inline_keyboard for b in row]

    @property
    def safe_html(self) -> str:
        """Browser-safe HTML rendering of text + entities (for the sandbox page)."""
        return entities_to_html(self.text, self.entities)

    def to_dict(self) -> JsonDict:
        """JSON-able view for the sandbox/control API."""
        return {
            "message_id": self.message_id,
            "chat_id": self.chat_id,
            "bot_id": self.bot_id,
            "date": self.date,
            "from": self.sender.to_api(),
            "from_bot": self.from_bot,
            "text": self.text,
            "html": self.html,
            "safe_html": self.safe_html,
            "parse_mode": self.parse_mode,
            "entities": self.entities,
            "buttons": self.buttons,
            "reply_markup": self.reply_markup,
            "reply_to_message_id": self.reply_to_message_id,
            "edit_count": self.edit_count,
            "edit_date": self.edit_date,
            **self.extra,
        }


@dataclass
class EmuChat:
    """A group/supergroup (shared by all bots in it) or one user's private chat with one bot."""

    id: int
    type: str  # "private" | "group" | "supergroup"
    title: str | None = None
    peer: EmuUser | None = None  # the user of a private chat
    bot_id: int | None = None  # the bot of a private chat
    members: set[int] = field(default_factory=set)  # users (not bots)
    admins: set[int] = field(default_factory=set)  # users or bots
    creator: int | None = None
    bots: set[int] = field(default_factory=set)  # bot user ids currently in the chat
    kicked_bots: set[int] = field(default_factory=set)
    messages: dict[int, EmuMessage] = field(default_factory=dict)
    next_message_id: int = 1
    pinned: list[int] = field(default_factory=list)
    events: list[JsonDict] = field(default_factory=list)

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    def to_api(self) -> JsonDict:
        if self.peer is not None:
            data = self.peer.to_api()
            chat: JsonDict = {"id": self.id, "type": "private", "first_name": data["first_name"]}
            for key in ("last_name", "username"):
                if key in data:
                    chat[key] = data[key]
            return chat
        return {"id": self.id, "type": self.type, "title": self.title or ""}

    def to_dict(self) -> JsonDict:
        return {
            **self.to_api(),
            "bot_id": self.bot_id,
            "members": sorted(self.members),
            "admins": sorted(self.admins),
            "creator": self.creator,
            "bots": sorted(self.bots),
            "message_count": sum(1 for m in self.messages.values() if not m.deleted),
        }


@dataclass(frozen=True)
class CallbackAnswer:
    """What the bot passed to answerCallbackQuery."""

    callback_query_id: str
    text: str | None = None
    show_alert: bool = False
    url: str | None = None
    cache_time: int = 0

    def to_dict(self) -> JsonDict:
        return {
            "callback_query_id": self.callback_query_id,
            "text": self.text,
            "show_alert": self.show_alert,
            "url": self.url,
            "cache_time": self.cache_time,
        }


class CallbackHandle:
    """A pressed button; ``await handle.answer()`` yields the bot's answerCallbackQuery."""

    def __init__(
        self,
        query_id: str,
        *,
        bot_id: int,
        user_id: int,
        chat_id: int,
        message_id: int,
        data: str,
        created_at: float,
    ) -> None:
        self.id = query_id
        self.bot_id = bot_id
        self.user_id = user_id
        self.chat_id = chat_id
        self.message_id = message_id
        self.data = data
        self.created_at = created_at
        self._future: asyncio.Future[CallbackAnswer] = asyncio.get_running_loop().create_future()

    @property
    def answered(self) -> bool:
        return self._future.done()

    @property
    def result(self) -> CallbackAnswer | None:
        return self._future.result() if self._future.done() else None

    def _resolve(self, answer: CallbackAnswer) -> None:
        if not self._future.done():
            self._future.set_result(answer)

    async def answer(self, timeout: float = 5.0) -> CallbackAnswer:
        try:
            return await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except TimeoutError:
            raise TimeoutError(
                f"bot did not answer callback query {self.id} (data={self.data!r}, "
                f"chat {self.chat_id}, message {self.message_id}) within {timeout}s"
            ) from None

    def __repr__(self) -> str:
        return f"CallbackHandle(id={self.id!r}, data={self.data!r}, answered={self.answered})"


CommandsKey = tuple[str, int | None, int | None, str]


@dataclass
class EmuBot:
    """A bot account with its update queue and per-bot settings."""

    token: str
    user: EmuUser
    updates: list[JsonDict] = field(default_factory=list)
    next_update_id: int = 1
    started: set[int] = field(default_factory=set)  # users who opened the private chat
    blocked: set[int] = field(default_factory=set)
    commands: dict[CommandsKey, list[JsonDict]] = field(default_factory=dict)
    webhook: JsonDict | None = None
    allowed_updates: list[str] | None = None
    callbacks: dict[str, CallbackHandle] = field(default_factory=dict)
    poll_generation: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    settings: JsonDict = field(default_factory=dict)

    @property
    def id(self) -> int:
        return self.user.id

    def poke(self) -> None:
        """Wake every getUpdates waiting for this bot."""
        event, self.wake = self.wake, asyncio.Event()
        event.set()


class Params:
    """Request parameters from JSON, form or query data.

    Form values arrive as strings with non-strings JSON-encoded (how PTB sends them), so each
    getter converts only the fields that need it; ``text`` that looks like a number stays text.
    """

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values: JsonDict = dict(values)

    def __contains__(self, name: str) -> bool:
        return self.values.get(name) not in (None, "")

    def get_str(self, name: str) -> str | None:
        value = self.values.get(name)
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value)

    def get_int(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            raise ApiError(400, f"Bad Request: invalid {name} specified")
        if isinstance(value, int):
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            raise ApiError(400, f"Bad Request: invalid {name} specified") from None

    def get_float(self, name: str) -> float | None:
        value = self.values.get(name)
        if value is None or value == "" or isinstance(value, bool):
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ApiError(400, f"Bad Request: invalid {name} specified") from None

    def get_bool(self, name: str, default: bool = False) -> bool:
        value = self.values.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            return value != 0
        return str(value).strip().lower() in ("true", "1")

    def get_json(self, name: str, error: str | None = None) -> Any:
        value = self.values.get(name)
        if not isinstance(value, str):
            return value
        if value == "":
            return None
        try:
            return json.loads(value)
        except ValueError:
            raise ApiError(400, error or f"Bad Request: can't parse {name} JSON object") from None

    def chat_id(self) -> int | str:
        value = self.values.get("chat_id")
        if value is None or value == "":
            raise ApiError(400, "Bad Request: chat_id is empty")
        if isinstance(value, str) and value.strip().startswith("@"):
            return value.strip()
        try:
            return self.get_int("chat_id") or 0
        except ApiError:
            raise ApiError(400, ERR_CHAT_NOT_FOUND) from None

    def chat_id_or_none(self) -> int | None:
        """chat_id for statistics and fault matching; never raises."""
        try:
            value = self.get_int("chat_id")
        except ApiError:
            return None
        return value
