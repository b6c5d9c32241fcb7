"""Ephemeral messages (Bot API 10.2): messages in a group that only one member sees.

A bot sends one to a ``receiver`` (``sendMessage`` with ``ephemeral_message_parameters``,
or 10.2's flat ``receiver_user_id``/``callback_query_id``), then edits or deletes it by
chat, receiver and ``ephemeral_message_id``. A person can send an ephemeral command to a
bot (one the bot declared with ``is_ephemeral``). They are never in the chat's history.

Each one has the server's copy (what the bot edits) and what the receiver's app shows:
an offline app gets neither the message nor its edits (Telegram does not queue them),
and an app may drop them (after some time, on a restart): ``user_drops_ephemeral``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from sandbox.emulator.errors import EmulatorError
from sandbox.emulator.models import EmuChat, EmuEphemeral, EmuMessage, EmuUser
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World

# "Any bot can send an ephemeral message to a user within 15 seconds of the incoming
# eligible action" (a callback query, or an incoming ephemeral message).
EPHEMERAL_REPLY_WINDOW = 15.0


class Ephemerals:
    """Storing ephemeral messages and their client copies; each visible change is an
    ``ephemeral`` event naming its only viewer (``viewer_id``)."""

    def __init__(self, world: World) -> None:
        self.w = world

    def add(
        self,
        chat: EmuChat,
        sender: EmuUser,
        receiver: EmuUser,
        *,
        text: str,
        html: str | None = None,
        parse_mode: str | None = None,
        entities: list[JsonDict] | None = None,
        reply_markup: JsonDict | None = None,
        reply_to: int | None = None,
        thread_id: int | None = None,
        replaces_message_id: int | None = None,
    ) -> EmuEphemeral:
        ephemeral_id = chat.next_ephemeral_id
        chat.next_ephemeral_id += 1
        message = EmuMessage(
            message_id=0,
            chat_id=chat.id,
            chat_type=chat.type,
            date=self.w.events.now(),
            sender=sender,
            text=text,
            html=text if html is None else html,
            parse_mode=parse_mode,
            entities=entities or [],
            reply_markup=reply_markup,
            reply_to_message_id=reply_to,
            thread_id=thread_id,
            ephemeral_message_id=ephemeral_id,
            receiver=receiver,
        )
        record = EmuEphemeral(
            message=message,
            shown=None,
            created_at=self.w.clock(),
            after_message_id=chat.next_message_id - 1,
            replaces_message_id=replaces_message_id,
        )
        chat.ephemerals[ephemeral_id] = record
        viewer = self.w.registry.users.get(record.viewer_id)
        if viewer is not None and viewer.online:
            record.shown = copy.deepcopy(message)
            self._emit(chat, record, "new")
        return record

    def find(self, chat: EmuChat, ephemeral_id: int | None) -> EmuEphemeral | None:
        """The live (not deleted) ephemeral message with this id."""
        record = chat.ephemerals.get(ephemeral_id or 0)
        if record is None or record.message.deleted:
            return None
        return record

    def edit(
        self,
        chat: EmuChat,
        record: EmuEphemeral,
        *,
        text: str | None = None,
        html: str | None = None,
        parse_mode: str | None = None,
        entities: list[JsonDict] | None = None,
        reply_markup: JsonDict | None,
    ) -> None:
        message = record.message
        if text is not None:
            message.text = text
            message.html = text if html is None else html
            message.parse_mode = parse_mode
            message.entities = entities or []
        message.reply_markup = reply_markup
        message.edit_count += 1
        message.edit_date = self.w.events.now()
        if record.shown is not None and self._online(record):
            record.shown = copy.deepcopy(message)
            self._emit(chat, record, "edit")

    def delete(self, chat: EmuChat, record: EmuEphemeral) -> None:
        """Deleted on the server; an offline app keeps its copy until it drops it."""
        record.message.deleted = True
        if record.shown is None or self._online(record):
            self.forget(chat, record)

    def drop(self, chat: EmuChat, record: EmuEphemeral) -> None:
        """The receiver's app no longer shows it (expired, or the app restarted)."""
        if record.shown is None:
            return
        self.forget(chat, record)

    def forget(self, chat: EmuChat, record: EmuEphemeral) -> None:
        """Gone from the receiver's app (and from the emulator once deleted)."""
        had_copy = record.shown is not None
        record.shown = None
        if had_copy:
            self._emit(chat, record, "delete")
        if record.message.deleted:
            chat.ephemerals.pop(record.message.ephemeral_message_id or 0, None)

    def _online(self, record: EmuEphemeral) -> bool:
        viewer = self.w.registry.users.get(record.viewer_id)
        return viewer is not None and viewer.online

    def _emit(self, chat: EmuChat, record: EmuEphemeral, action: str) -> None:
        self.w.events.emit(
            chat,
            "ephemeral",
            action=action,
            viewer_id=record.viewer_id,
            ephemeral_message_id=record.message.ephemeral_message_id,
            after_message_id=record.after_message_id,
            replaces_message_id=record.replaces_message_id,
            message=record.shown.to_dict() if record.shown is not None else None,
        )


class EphemeralActions:
    """What people's apps do with ephemeral messages; misuse is an ``EmulatorError``."""

    def __init__(self, world: World, ephemerals: Ephemerals) -> None:
        self.w = world
        self.ephemerals = ephemerals

    def set_online(self, user_id: int, online: bool = True) -> None:
        """Whether the person's app is connected. Offline, ephemeral messages and their
        edits do not reach them (and are not delivered later); nothing else changes."""
        user = self.w.registry.user(user_id)
        if user.is_bot:
            raise EmulatorError(f"{user_id} is a bot")
        user.online = online
        self.w.events.emit(None, "state", what="presence", user_id=user_id, online=online)

    def user_drops_ephemeral(
        self, user_id: int, chat_id: int, ephemeral_message_id: int | None = None
    ) -> int:
        """The app drops one ephemeral message (``None``: all of them, as on a restart);
        returns how many it dropped. The bot is not told; its edits still succeed."""
        self.w.registry.user(user_id)
        chat = self.w.registry.group(chat_id)
        dropped = 0
        for record in list(chat.ephemerals.values()):
            if record.viewer_id != user_id or record.shown is None:
                continue
            if ephemeral_message_id is not None and (
                record.message.ephemeral_message_id != ephemeral_message_id
            ):
                continue
            self.ephemerals.drop(chat, record)
            dropped += 1
        if ephemeral_message_id is not None and not dropped:
            raise EmulatorError(
                f"user {user_id}'s app shows no ephemeral message {ephemeral_message_id} "
                f"in chat {chat_id}"
            )
        return dropped

    def ephemerals_of(self, user_id: int, chat_id: int) -> list[EmuMessage]:
        """The ephemeral messages the person's app shows in a group, oldest first."""
        chat = self.w.registry.groups.get(chat_id)
        if chat is None:
            return []
        return [
            copy.deepcopy(record.shown)
            for record in chat.ephemerals.values()
            if record.viewer_id == user_id and record.shown is not None
        ]

    async def wait_for_ephemeral(
        self,
        user_id: int,
        chat_id: int,
        match: str | Callable[[EmuMessage], bool] | None = None,
        *,
        timeout: float = 5.0,
    ) -> EmuMessage:
        """Wait until the person's app shows an ephemeral message from a bot, newer than
        the call, matching ``match`` (a substring of the text, or a predicate)."""
        chat = self.w.registry.groups.get(chat_id)
        baseline = chat.next_ephemeral_id if chat is not None else 1

        def find() -> EmuMessage | None:
            for message in self.ephemerals_of(user_id, chat_id):
                if (message.ephemeral_message_id or 0) < baseline or not message.from_bot:
                    continue
                if match is None or (
                    match in message.text if isinstance(match, str) else match(message)
                ):
                    return message
            return None

        return await self.w.events.wait_for(
            find, timeout, what=f"ephemeral message for {user_id} in chat {chat_id}"
        )

    def ephemeral(self, chat_id: int, ephemeral_message_id: int) -> EmuMessage | None:
        """The server's copy of an ephemeral message (None once deleted)."""
        chat = self.w.registry.groups.get(chat_id)
        record = self.ephemerals.find(chat, ephemeral_message_id) if chat is not None else None
        return copy.deepcopy(record.message) if record is not None else None
