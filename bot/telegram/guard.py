"""Checks before the handlers run (handler group -2) and answers when they fail.

* Command floods: a member sending commands faster than ``FLOOD_MAX`` per ``FLOOD_WINDOW``
  in a group is ignored quietly; every reply a command sends is tagged with the command,
  so the outbox keeps at most one pending reply of each kind per chat.
* Storage outages: a tap is answered with a short "try again" toast when Redis does not
  answer within ``storage_wait`` seconds, instead of never.
* Lost games: a genuine tap (the message carries that button) on a game Redis no longer
  has retires the buttons and tells the group, once.
* Stray messages: a tap on a message of the current game that is not the one we keep up
  to date (a send whose answer timed out) adopts it if we have none, else deletes it. A
  hand shown as an ephemeral message in the group is told apart by its
  ``ephemeral_message_id`` (its ``message_id`` is 0) and checked against the seat's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError
from telegram import CallbackQuery, Message, Update
from telegram.constants import ChatType, MessageEntityType
from telegram.error import TelegramError
from telegram.ext import Application, ApplicationHandlerStop, ContextTypes, TypeHandler

from bot.app.games import Games
from bot.app.lost import announce_lost, retire_keyboard
from bot.domain import callbacks
from bot.domain.bounded import BoundedDict
from bot.domain.callbacks import CallbackError, GroupButton, HandButton
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.output.outbox import REPLY_SCOPE, ReplyScope
from bot.store.storage import Write
from bot.telegram.common import place_of
from locales import Translator

log = logging.getLogger(__name__)
FLOOD_WINDOW = 30.0
FLOOD_MAX = 8
"""Commands one member may send in one group per window; more are ignored quietly."""
MAX_TRACKED = 50_000
LANGUAGE_WAIT = 0.2
"""How long a "try again" answer waits for the tapper's language (the storage remembers
it for a while; otherwise Redis is likely away and the Telegram language will do)."""
LOST_LANGUAGE_WAIT = 3.0
"""The same for "this game was lost": Redis has just answered (it said the game is
gone), so the tapper's /language is worth waiting for even on a busy process."""


@dataclass
class GuardStats:
    quieted: int = 0
    try_again: int = 0
    lost: int = 0
    adopted: int = 0
    retired: int = 0


def command_name(message: Message) -> str | None:
    text = message.text or ""
    entity = message.entities[0] if message.entities else None
    if entity is None or entity.type != MessageEntityType.BOT_COMMAND or entity.offset != 0:
        return None
    return text[1 : entity.length].split("@")[0].lower()


def ephemeral_id(message: Any) -> int | None:
    """The ``ephemeral_message_id`` of a tapped ephemeral message (Bot API 10.2, newer
    than PTB 22: it arrives among the message's ``api_kwargs``); None for any other."""
    raw = (getattr(message, "api_kwargs", None) or {}).get("ephemeral_message_id")
    return int(raw) if raw is not None else None


def carries(query: CallbackQuery) -> bool:
    """The tapped message (as Telegram reports it) has a button with exactly this data:
    the data is ours, not forged, so the group it names is real."""
    message = query.message
    markup = getattr(message, "reply_markup", None)
    if markup is None:
        return False
    return any(b.callback_data == query.data for row in markup.inline_keyboard for b in row)


class Guard:
    def __init__(
        self,
        games: Games,
        *,
        storage_wait: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.games = games
        self.storage_wait = storage_wait
        self.clock = clock
        self.recent: BoundedDict[tuple[int, int], deque[float]] = BoundedDict(MAX_TRACKED)
        self.stats = GuardStats()

    def install(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        app.add_handler(TypeHandler(Update, self.before), group=-2)
        app.add_error_handler(self.failed)

    async def before(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        REPLY_SCOPE.set(None)
        if update.callback_query is not None:
            await self.tap(update.callback_query, place_of(update))
        elif update.message is not None:
            self.command(update.message)

    # --- commands -------------------------------------------------------------------

    def command(self, message: Message) -> None:
        name = command_name(message)
        if name is None or message.from_user is None:
            return
        if message.chat.type != ChatType.PRIVATE and self.flooding(
            message.chat.id, message.from_user.id
        ):
            self.stats.quieted += 1
            raise ApplicationHandlerStop
        REPLY_SCOPE.set(ReplyScope(name))

    def flooding(self, chat_id: int, user_id: int) -> bool:
        now = self.clock()
        times = self.recent.get((chat_id, user_id)) or deque()
        while times and times[0] <= now - FLOOD_WINDOW:
            times.popleft()
        flooding = len(times) >= FLOOD_MAX
        if not flooding:
            times.append(now)
        self.recent[(chat_id, user_id)] = times
        return flooding

    # --- taps -----------------------------------------------------------------------

    async def tap(self, query: CallbackQuery, here: Place | None) -> None:
        """``here``: the place of the tapped message (``place_of``)."""
        try:
            button = callbacks.decode(query.data or "")
        except CallbackError:
            return  # the handler answers "unknown button"
        if isinstance(button, GroupButton):
            if query.message is None or here is None:
                return
            place = here
        elif isinstance(button, HandButton):
            place = button.place
        else:
            return
        try:
            async with asyncio.timeout(self.storage_wait):
                # Only looked at (adopting writes its own copy): the parse the last move's
                # messages already made is shared, not repeated for every tap.
                game = await self.games.storage.peek_table(place)
        except (RedisError, TimeoutError) as err:
            log.warning("storage unavailable for a tap: %s", err)
            await self.try_again(query)
            raise ApplicationHandlerStop from err
        if game is None:
            if isinstance(button, GroupButton) and button.op == "new":
                return  # an old result's button: the game simply ended long ago
            live = self.games.box.live_tables.get(place)
            if carries(query) or (live is not None and live[0] == button.game_id):
                await self.lost(query, place, button.game_id)
                raise ApplicationHandlerStop
            return  # forged or unknown: the handler says "out of date"
        if game.game_id == button.game_id and query.message is not None:
            hand = isinstance(button, HandButton)
            ephemeral = ephemeral_id(query.message)
            if ephemeral is not None:
                if hand:
                    await self.stray_ephemeral(ephemeral, game, query)
                return
            await self.stray(query.message.message_id, game, query, hand=hand)

    async def own_language(self, query: CallbackQuery, wait: float = LANGUAGE_WAIT) -> Translator:
        """The tapper's language, chosen with /language if the storage knows it within
        ``wait``: these answers are for when Redis is away or lost the game."""
        user = query.from_user
        return await self.games.languages.person_if_reachable(
            user.id, user.language_code, wait=wait
        )

    async def try_again(self, query: CallbackQuery) -> None:
        self.stats.try_again += 1
        tr = await self.own_language(query)
        with contextlib.suppress(TelegramError):
            await query.answer(tr.t("toast.try_again"))

    async def lost(self, query: CallbackQuery, place: Place, game_id: str) -> None:
        self.stats.lost += 1
        tr = await self.own_language(query, LOST_LANGUAGE_WAIT)
        with contextlib.suppress(TelegramError):
            await query.answer(tr.t("toast.game_lost"))
        ephemeral = ephemeral_id(query.message)
        if ephemeral is not None:  # a hand in the group: only deleting takes it away
            self.games.box.retire_group_hand(place, query.from_user.id, ephemeral)
        elif query.message is not None:
            await retire_keyboard(self.games, query.message.chat.id, query.message.message_id)
        with contextlib.suppress(RedisError):
            await announce_lost(self.games, place, game_id)

    async def stray(
        self, message_id: int, game: ChatGame, query: CallbackQuery, *, hand: bool
    ) -> None:
        """The tapped message is ours; is it the one we keep up to date?"""
        if hand:
            seat = game.seat_of(query.from_user.id)
            if seat is None:
                return
            current = game.seats[seat].hand_message_id
        else:
            lobby = game.phase in ("lobby", "cancelled")
            current = game.lobby_message_id if lobby else game.table_message_id
        if current is None:
            await self.adopt(game, message_id, user_id=query.from_user.id if hand else None)
        elif message_id < current:
            self.stats.retired += 1
            chat = query.message.chat.id if query.message is not None else game.chat_id
            await self.games.box.retire(chat, message_id)

    async def stray_ephemeral(self, ephemeral: int, game: ChatGame, query: CallbackQuery) -> None:
        """A hand button on an ephemeral message in the group: is it the player's hand we
        keep up to date? (Ephemeral ids may be reused, so only equality counts.)"""
        user_id = query.from_user.id
        seat = game.seat_of(user_id)
        if seat is None or not game.seats[seat].in_group:
            return
        current = game.seats[seat].group_hand_id
        if current is None:
            await self.adopt(game, ephemeral, user_id=user_id, in_group=True)
        elif ephemeral != current:
            # An old hand (its delete failed): the current one may never have reached the
            # player either, so answer the tap with the hand anew, and retire the old.
            self.stats.retired += 1
            self.games.box.retire_group_hand(game.place, user_id, ephemeral)
            self.games.box.show_group_hand(game.place, user_id, query.id)

    async def adopt(
        self, game: ChatGame, message_id: int, *, user_id: int | None, in_group: bool = False
    ) -> None:
        """A message whose send timed out turned out to be showing: keep it up to date."""
        game_id = game.game_id

        def change(current: ChatGame | None) -> Write[bool]:
            if current is None or current.game_id != game_id:
                return Write(None, False)
            if user_id is None:
                lobby = current.phase in ("lobby", "cancelled")
                if (current.lobby_message_id if lobby else current.table_message_id) is not None:
                    return Write(None, False)
                if lobby:
                    current.lobby_message_id = message_id
                else:
                    current.table_message_id = message_id
            else:
                seat = current.seat_of(user_id)
                info = None if seat is None else current.seats[seat]
                shown = (
                    None
                    if info is None
                    else info.group_hand_id
                    if in_group
                    else info.hand_message_id
                )
                if info is None or shown is not None:
                    return Write(None, False)
                if in_group:
                    info.group_hand_id = message_id
                else:
                    info.hand_message_id = message_id
            return Write(current, True)

        if await self.games.storage.update_table(game.place, change):
            self.stats.adopted += 1
            self.games.box.refresh(game)

    # --- failures -------------------------------------------------------------------

    async def failed(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A handler failed on Redis: the tap still gets its answer."""
        if not isinstance(context.error, RedisError | TimeoutError):
            return
        if isinstance(update, Update) and update.callback_query is not None:
            await self.try_again(update.callback_query)
