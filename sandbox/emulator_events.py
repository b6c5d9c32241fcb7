"""Change events, subscriptions and Bot API object helpers for the emulator."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterable
from types import TracebackType

from sandbox.emulator_html import utf16_len
from sandbox.emulator_models import EmuUser, JsonDict

_COMMAND_RE = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![A-Za-z0-9_@])")
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


def command_entities(text: str) -> list[JsonDict]:
    """bot_command entities the Telegram client attaches to a user's text."""
    entities: list[JsonDict] = []
    for match in _COMMAND_RE.finditer(text):
        offset = utf16_len(text[: match.start()])
        entities.append(
            {"type": "bot_command", "offset": offset, "length": utf16_len(match.group())}
        )
    return entities


def member_api(user: EmuUser, status: str) -> JsonDict:
    """A ChatMember object with every field PTB requires for that status."""
    data: JsonDict = {"user": user.to_api(), "status": status}
    if status == "creator":
        data["is_anonymous"] = False
    elif status == "administrator":
        data.update(_ADMIN_RIGHTS)
    elif status == "kicked":
        data["until_date"] = 0
    return data


def describe_event(event: JsonDict) -> str:
    """One line per event, for timeout messages."""
    line = f"#{event.get('seq')} {event.get('type')} chat={event.get('chat_id')}"
    message = event.get("message")
    if isinstance(message, dict):
        sender = message.get("from", {})
        who = sender.get("username") or sender.get("first_name") or "?"
        text = str(message.get("text", ""))
        line += f" msg={message.get('message_id')} {who}: {text[:100]!r}"
        buttons = [b["text"] for row in message.get("buttons", []) for b in row]
        if buttons:
            line += f" buttons={buttons}"
    for key in ("message_id", "data", "text", "action", "status", "user_id"):
        if key in event and not (key == "message_id" and isinstance(message, dict)):
            line += f" {key}={event[key]!r}"
    return line


class Subscription:
    """A stream of change events; registered on creation, so nothing is missed."""

    def __init__(
        self,
        chat_ids: Iterable[int] | None,
        maxsize: int,
        on_close: Callable[[Subscription], None],
    ) -> None:
        self._on_close = on_close
        self._chat_ids = frozenset(chat_ids) if chat_ids is not None else None
        self._maxsize = maxsize
        self._queue: asyncio.Queue[JsonDict | None] = asyncio.Queue()
        self.closed = False

    def offer(self, event: JsonDict) -> None:
        if self.closed:
            return
        chat_id = event.get("chat_id")
        if self._chat_ids is not None and chat_id is not None and chat_id not in self._chat_ids:
            return
        if self._queue.qsize() >= self._maxsize:
            # A stalled consumer (e.g. a hidden browser tab) must not grow memory forever.
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(event)

    async def get(self, timeout: float | None = None) -> JsonDict | None:
        """Next event; None once closed. Raises TimeoutError after ``timeout`` seconds."""
        if self.closed and self._queue.empty():
            return None
        if timeout is None:
            return await self._queue.get()
        return await asyncio.wait_for(self._queue.get(), timeout)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._on_close(self)
            self._queue.put_nowait(None)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> JsonDict:
        event = await self.get()
        if event is None:
            raise StopAsyncIteration
        return event

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
