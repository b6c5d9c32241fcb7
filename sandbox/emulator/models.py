"""Data model of the Bot API emulator: users, chats, messages, bots, callback queries."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sandbox.emulator.telegram_html import entities_to_html
from sandbox.emulator.types import JsonDict


@dataclass
class EmuUser:
    """A Telegram account: a person or a bot."""

    id: int
    first_name: str
    is_bot: bool = False
    username: str | None = None
    last_name: str | None = None
    language_code: str | None = "en"
    # The person's Telegram app is connected. Ephemeral messages (and their edits) reach
    # only online clients; Telegram does not queue them for later.
    online: bool = True

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
    # Shown in a supergroup's history from before the group was upgraded: bots cannot
    # edit or delete it under the new chat id (it belongs to the old group).
    history: bool = False
    extra: JsonDict = field(default_factory=dict)  # service fields, e.g. new_chat_members
    thread_id: int | None = None  # forum topic (its message_thread_id); None = General
    # Ephemeral messages: never in the chat's history, seen only by ``receiver``.
    ephemeral_message_id: int | None = None
    receiver: EmuUser | None = None

    @property
    def from_bot(self) -> bool:
        return self.sender.is_bot

    @property
    def is_ephemeral(self) -> bool:
        return self.ephemeral_message_id is not None

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
            **self._thread_and_ephemeral(),
            **self.extra,
        }

    def _thread_and_ephemeral(self) -> JsonDict:
        # Only when set, so ordinary messages keep exactly their former shape.
        data: JsonDict = {}
        if self.thread_id is not None:
            data["message_thread_id"] = self.thread_id
        if self.ephemeral_message_id is not None:
            data["ephemeral_message_id"] = self.ephemeral_message_id
            data["receiver"] = self.receiver.to_api() if self.receiver is not None else None
        return data


GENERAL_TOPIC_ID = 1  # the General topic of a forum (Bot API messages there carry no thread)
DEFAULT_TOPIC_COLOR = 7322096  # 0x6FB9F0, the first of Telegram's six topic icon colours


@dataclass
class EmuTopic:
    """A forum topic. Its id (``message_thread_id``) is the id of the service message
    ``forum_topic_created`` that opened it; the General topic has id 1 and no such message."""

    id: int
    name: str
    icon_color: int = DEFAULT_TOPIC_COLOR
    icon_custom_emoji_id: str | None = None
    creator: int | None = None  # who created it (a bot may edit/close/delete its own topics)
    closed: bool = False

    @property
    def is_general(self) -> bool:
        return self.id == GENERAL_TOPIC_ID

    def to_api(self) -> JsonDict:
        """A Bot API ForumTopic object."""
        data: JsonDict = {
            "message_thread_id": self.id,
            "name": self.name,
            "icon_color": self.icon_color,
        }
        if self.icon_custom_emoji_id:
            data["icon_custom_emoji_id"] = self.icon_custom_emoji_id
        return data

    def to_dict(self) -> JsonDict:
        return {**self.to_api(), "creator": self.creator, "closed": self.closed}


@dataclass
class EmuEphemeral:
    """One ephemeral message: the server's copy (what the bot edits and deletes) and what
    the receiver's app shows, which can differ: an offline app misses the message or its
    edits, and an app may drop ephemeral messages (after some time, or on a restart)."""

    message: EmuMessage
    shown: EmuMessage | None  # the receiver's client copy; None = not there
    created_at: float  # emulator clock: a reply to it is allowed within 15 s
    after_message_id: int  # where it sits in the receiver's view: after this history message
    replaces_message_id: int | None = None  # replace_callback_query_message: hides that one

    @property
    def receiver_id(self) -> int:
        return self.message.receiver.id if self.message.receiver is not None else 0

    @property
    def viewer_id(self) -> int:
        """The one person who sees it: its receiver, or the sender of an ephemeral command."""
        receiver = self.message.receiver
        if receiver is not None and not receiver.is_bot:
            return receiver.id
        return self.message.sender.id


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
    migrated_to: int | None = None  # set on a basic group upgraded to a supergroup
    is_forum: bool = False  # a supergroup with topics enabled
    topics: dict[int, EmuTopic] = field(default_factory=dict)  # kept while topics are off
    ephemerals: dict[int, EmuEphemeral] = field(default_factory=dict)
    next_ephemeral_id: int = 1
    # Administrator rights that differ from the emulator's defaults, per admin.
    admin_rights: dict[int, JsonDict] = field(default_factory=dict)
    # Members (people or bots) who may not send messages (ChatMemberRestricted).
    muted: set[int] = field(default_factory=set)

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    def to_api(self) -> JsonDict:
        if self.peer is not None:
            peer = self.peer.to_api()
            chat: JsonDict = {"id": self.id, "type": "private", "first_name": peer["first_name"]}
            for key in ("last_name", "username"):
                if key in peer:
                    chat[key] = peer[key]
            return chat
        data: JsonDict = {"id": self.id, "type": self.type, "title": self.title or ""}
        if self.is_forum:
            data["is_forum"] = True
        return data

    def to_dict(self) -> JsonDict:
        return {
            **self.to_api(),
            "bot_id": self.bot_id,
            "members": sorted(self.members),
            "admins": sorted(self.admins),
            "creator": self.creator,
            "bots": sorted(self.bots),
            "message_count": sum(1 for m in self.messages.values() if not m.deleted),
            **({"topics": [t.to_dict() for t in self.topics.values()]} if self.is_forum else {}),
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
        ephemeral_message_id: int | None = None,
    ) -> None:
        self.id = query_id
        self.ephemeral_message_id = ephemeral_message_id  # a button on an ephemeral message
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


@dataclass
class Webhook:
    """What setWebhook configured, and how delivery is going (for getWebhookInfo)."""

    url: str
    secret_token: str | None = None
    max_connections: int = 40
    allowed_updates: list[str] | None = None
    last_error_date: int | None = None
    last_error_message: str | None = None

    def info(self) -> JsonDict:
        data: JsonDict = {"url": self.url, "max_connections": self.max_connections}
        if self.allowed_updates:
            data["allowed_updates"] = list(self.allowed_updates)
        if self.last_error_date is not None:
            data["last_error_date"] = self.last_error_date
            data["last_error_message"] = self.last_error_message or ""
        return data


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
    webhook: Webhook | None = None
    allowed_updates: list[str] | None = None
    callbacks: dict[str, CallbackHandle] = field(default_factory=dict)
    # Every recent query, answered or not: an ephemeral reply may name one for 15 s.
    queries: dict[str, CallbackHandle] = field(default_factory=dict)
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


_ADMIN_RIGHTS: JsonDict = {
    "can_be_edited": False,
    "is_anonymous": False,
    "can_manage_chat": True,
    "can_delete_messages": True,
    "can_manage_video_chats": True,
    "can_restrict_members": True,
    "can_promote_members": False,
    "can_change_info": True,
    "can_invite_users": True,
    "can_post_stories": True,
    "can_edit_stories": True,
    "can_delete_stories": True,
    "can_pin_messages": True,
    "can_manage_topics": False,
}


_MEMBER_RIGHTS = (
    "can_send_messages",
    "can_send_audios",
    "can_send_documents",
    "can_send_photos",
    "can_send_videos",
    "can_send_video_notes",
    "can_send_voice_notes",
    "can_send_polls",
    "can_send_other_messages",
    "can_add_web_page_previews",
    "can_change_info",
    "can_invite_users",
    "can_pin_messages",
    "can_manage_topics",
    "can_edit_tag",
)


def admin_rights(overrides: JsonDict | None = None) -> JsonDict:
    """An administrator's rights: the emulator's defaults with ``overrides`` applied."""
    return {**_ADMIN_RIGHTS, **(overrides or {})}


def member_api(user: EmuUser, status: str, *, rights: JsonDict | None = None) -> JsonDict:
    """A ChatMember object with every field PTB requires for that status.

    ``rights``: an administrator's rights that differ from the defaults.
    """
    data: JsonDict = {"user": user.to_api(), "status": status}
    if status == "creator":
        data["is_anonymous"] = False
    elif status == "administrator":
        data.update(admin_rights(rights))
    elif status == "kicked":
        data["until_date"] = 0
    elif status == "restricted":
        # Muted: still a member, may not send anything.
        data.update({name: False for name in _MEMBER_RIGHTS})
        data.update({"is_member": True, "until_date": 0})
    return data
