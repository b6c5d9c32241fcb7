"""The bot's core: runs flow changes through storage, then timers and output.

Handlers and the scheduler call this; it knows nothing about updates or queries.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot import flow, render
from bot.ai_runner import AiRunner, ai_seed
from bot.flow import Effects, FlowError
from bot.outbox import HandMode, Outbox
from bot.records import ChatGame
from bot.render import Rendered
from bot.scheduler import Scheduler
from bot.storage import Storage, Write
from engine import Action, Card
from locales import Translator, negotiate, translator

log = logging.getLogger(__name__)

Change = Callable[[ChatGame | None], tuple[ChatGame | None, Effects]]


@dataclass(frozen=True)
class Timing:
    turn_timeout: float
    ai_delay: float
    notify_quiet: float
    throw_in_window: float = 7.0


class Games:
    def __init__(
        self,
        storage: Storage,
        timing: Timing,
        ai: AiRunner,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.timing = timing
        self.ai = ai
        self.clock = clock
        self.bot_username = "bot"
        self.outbox: Outbox | None = None
        self.scheduler = Scheduler(storage, self.timer_fired, clock=clock)

    @property
    def box(self) -> Outbox:
        assert self.outbox is not None, "outbox not attached"
        return self.outbox

    # --- changing a game -------------------------------------------------------------------

    async def change(self, chat_id: int, fn: Change) -> tuple[ChatGame | None, Effects]:
        """Apply ``fn`` atomically, then show the result and set the next timer."""

        def step(current: ChatGame | None) -> Write[tuple[ChatGame | None, Effects]]:
            game, effects = fn(current)
            return Write(game, (game, effects), stats=effects.stats)

        game, effects = await self.storage.update_table(chat_id, step)
        if game is not None:
            await self.after(game, effects)
        return game, effects

    async def after(self, game: ChatGame, effects: Effects) -> None:
        due = flow.next_due(game)
        if due is not None and game.phase == "playing":
            await self.scheduler.schedule(game.chat_id, due)
        self.box.refresh(game, effects.notify, effects.calm)
        if effects.announce or effects.ended:
            tr = await self.group_translator(game.chat_id)
            for note in effects.announce:
                self.box.say(game.chat_id, Rendered(tr.t(note.key, **note.kwargs)))
            if effects.ended:
                # A new message, so the group is notified of the ending.
                self.box.say(game.chat_id, render.results_message(game, tr))

    def kwargs(self) -> dict[str, float]:
        t = self.timing
        return {"ai_delay": t.ai_delay, "turn_timeout": t.turn_timeout}

    async def play(
        self, chat_id: int, game_id: str, user_id: int, step: int, action: Action
    ) -> None:
        now = self.clock()
        t = self.timing
        await self.change(
            chat_id,
            lambda game: flow.play(
                game,
                game_id,
                user_id,
                step,
                action,
                now,
                ai_delay=t.ai_delay,
                turn_timeout=t.turn_timeout,
                notify_quiet=t.notify_quiet,
                throw_in_window=t.throw_in_window,
            ),
        )

    async def leave(self, chat_id: int, game_id: str, user_id: int) -> None:
        now = self.clock()
        await self.change(
            chat_id, lambda game: flow.leave_game(game, game_id, user_id, now, **self.kwargs())
        )

    async def take_back(self, chat_id: int, game_id: str, user_id: int) -> None:
        now = self.clock()
        await self.change(
            chat_id,
            lambda game: flow.take_back_seat(game, game_id, user_id, now, **self.kwargs()),
        )

    # --- timers and computer seats ----------------------------------------------------------

    async def timer_fired(self, chat_id: int) -> None:
        game = await self.storage.load_table(chat_id)
        if game is None or game.phase != "playing":
            return
        now = self.clock()
        t = self.timing
        turn = flow.ai_turn(game, now)
        if turn is not None:
            seat, view = turn
            level = game.seats[seat].ai or "normal"
            action = await self.ai.choose(level, ai_seed(game.game_id, view.step, seat), view)
            game_id, step = game.game_id, view.step
            # Someone may have moved first; the new state then has its own timer.
            with contextlib.suppress(FlowError):
                await self.change(
                    chat_id,
                    lambda current: flow.ai_move(
                        current,
                        game_id,
                        seat,
                        step,
                        action,
                        self.clock(),
                        ai_delay=t.ai_delay,
                        turn_timeout=t.turn_timeout,
                        notify_quiet=t.notify_quiet,
                        throw_in_window=t.throw_in_window,
                    ),
                )
        elif game.turn_deadline is not None and game.turn_deadline <= now:
            await self.change(
                chat_id,
                lambda current: flow.on_timeout(
                    current,
                    now,
                    ai_delay=t.ai_delay,
                    turn_timeout=t.turn_timeout,
                    notify_quiet=t.notify_quiet,
                    throw_in_window=t.throw_in_window,
                ),
            )
        await self.ensure_timer(chat_id)

    async def ensure_timer(self, chat_id: int) -> None:
        game = await self.storage.load_table(chat_id)
        if game is not None and game.phase == "playing":
            due = flow.next_due(game)
            if due is not None:
                await self.scheduler.schedule(chat_id, due)

    async def resume(self) -> None:
        """After a start: every running game gets its timer and a fresh look."""
        for chat_id in await self.storage.running_chats():
            game = await self.storage.load_table(chat_id)
            if game is None or game.phase != "playing":
                continue
            due = flow.next_due(game)
            if due is not None:
                await self.scheduler.schedule(chat_id, due)
            self.box.refresh(game)

    # --- rendering with data ------------------------------------------------------------------

    async def group_translator(self, chat_id: int) -> Translator:
        settings = await self.storage.chat_settings(chat_id)
        return translator(negotiate(settings.lang))

    async def unreachable(self, game: ChatGame) -> list[str]:
        names = []
        for seat in game.seats:
            if seat.human and seat.user_id is not None:
                record = await self.storage.user(seat.user_id)
                if not record.dm_open:
                    names.append(seat.name)
        return names

    async def render_group(self, game: ChatGame) -> Rendered:
        tr = await self.group_translator(game.chat_id)
        if game.phase == "lobby":
            return render.lobby_message(game, tr, self.bot_username, await self.unreachable(game))
        if game.phase == "cancelled":
            return render.cancelled(tr)
        return render.table_message(game, tr, self.bot_username, now=self.clock())

    async def render_hand(self, game: ChatGame, seat: int, mode: HandMode | None) -> Rendered:
        info = game.seats[seat]
        # A language chosen with /language in private wins over the Telegram one.
        chosen = (await self.storage.user(info.user_id)).lang if info.user_id else None
        tr = translator(negotiate(chosen or info.lang))
        if info.left:
            return render.hand_closed(game, tr, seat)
        pick = None
        if mode is not None and mode[0] == "pick":
            pick = Card(mode[1])
        return render.hand_message(
            game,
            seat,
            tr,
            pick=pick,
            confirm_leave=mode is not None and mode[0] == "leave",
            now=self.clock(),
        )
