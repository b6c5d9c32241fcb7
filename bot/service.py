"""The bot's core: runs flow changes through storage, then timers and output.

Handlers and the scheduler call this; it knows nothing about updates or queries.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot import flow, render
from bot.ai_runner import AiRunner, ai_seed
from bot.flow import Effects, FlowError
from bot.outbox import HandMode, Outbox
from bot.records import Table
from bot.render import Rendered
from bot.scheduler import Scheduler
from bot.storage import Storage, Write
from bot.webapp.links import AppButtons
from engine import Action, Card
from locales import Translator, negotiate, translator

log = logging.getLogger(__name__)

Change = Callable[[Table | None], tuple[Table | None, Effects]]


@dataclass(frozen=True)
class Timing:
    turn_timeout: float
    ai_delay: float
    notify_quiet: float


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
        self.on_change: list[Callable[[Table, Effects], Awaitable[None]]] = []
        """Called after every committed change (the Mini App's live events)."""
        self.app_buttons: AppButtons | None = None

    @property
    def box(self) -> Outbox:
        assert self.outbox is not None, "outbox not attached"
        return self.outbox

    # --- changing a table -------------------------------------------------------------------

    async def change(self, chat_id: int, fn: Change) -> tuple[Table | None, Effects]:
        """Apply ``fn`` atomically, then show the result and set the next timer."""

        def step(current: Table | None) -> Write[tuple[Table | None, Effects]]:
            table, effects = fn(current)
            return Write(table, (table, effects), stats=effects.stats)

        table, effects = await self.storage.update_table(chat_id, step)
        if table is not None:
            await self.after(table, effects)
        return table, effects

    async def after(self, table: Table, effects: Effects) -> None:
        for listener in self.on_change:
            await listener(table, effects)
        due = flow.next_due(table)
        if due is not None and table.phase == "playing":
            await self.scheduler.schedule(table.chat_id, due)
        self.box.refresh(table, effects.notify, effects.calm)
        if effects.announce:
            tr = await self.group_translator(table.chat_id)
            for note in effects.announce:
                self.box.say(table.chat_id, Rendered(tr.t(note.key, **note.kwargs)))

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
            lambda table: flow.play(
                table,
                game_id,
                user_id,
                step,
                action,
                now,
                ai_delay=t.ai_delay,
                turn_timeout=t.turn_timeout,
                notify_quiet=t.notify_quiet,
            ),
        )

    async def leave(self, chat_id: int, game_id: str, user_id: int) -> None:
        now = self.clock()
        await self.change(
            chat_id, lambda table: flow.leave_game(table, game_id, user_id, now, **self.kwargs())
        )

    async def take_back(self, chat_id: int, game_id: str, user_id: int) -> None:
        now = self.clock()
        await self.change(
            chat_id,
            lambda table: flow.take_back_seat(table, game_id, user_id, now, **self.kwargs()),
        )

    # --- timers and computer seats ----------------------------------------------------------

    async def timer_fired(self, chat_id: int) -> None:
        table = await self.storage.load_table(chat_id)
        if table is None or table.phase != "playing":
            return
        now = self.clock()
        t = self.timing
        turn = flow.ai_turn(table, now)
        if turn is not None:
            seat, view = turn
            level = table.seats[seat].ai or "normal"
            action = await self.ai.choose(level, ai_seed(table.game_id, view.step, seat), view)
            game_id, step = table.game_id, view.step
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
                    ),
                )
        elif table.turn_deadline is not None and table.turn_deadline <= now:
            await self.change(
                chat_id,
                lambda current: flow.on_timeout(
                    current,
                    now,
                    ai_delay=t.ai_delay,
                    turn_timeout=t.turn_timeout,
                    notify_quiet=t.notify_quiet,
                ),
            )
        await self.ensure_timer(chat_id)

    async def ensure_timer(self, chat_id: int) -> None:
        table = await self.storage.load_table(chat_id)
        if table is not None and table.phase == "playing":
            due = flow.next_due(table)
            if due is not None:
                await self.scheduler.schedule(chat_id, due)

    async def resume(self) -> None:
        """After a start: every running game gets its timer and a fresh look."""
        for chat_id in await self.storage.running_chats():
            table = await self.storage.load_table(chat_id)
            if table is None or table.phase != "playing":
                continue
            due = flow.next_due(table)
            if due is not None:
                await self.scheduler.schedule(chat_id, due)
            self.box.refresh(table)

    # --- rendering with data ------------------------------------------------------------------

    async def group_translator(self, chat_id: int) -> Translator:
        settings = await self.storage.chat_settings(chat_id)
        return translator(negotiate(settings.lang))

    async def unreachable(self, table: Table) -> list[str]:
        names = []
        for seat in table.seats:
            if seat.human and seat.user_id is not None:
                record = await self.storage.user(seat.user_id)
                if not record.dm_open:
                    names.append(seat.name)
        return names

    async def render_group(self, table: Table) -> Rendered:
        tr = await self.group_translator(table.chat_id)
        if table.phase == "lobby":
            return render.lobby(table, tr, self.bot_username, await self.unreachable(table))
        if table.phase == "cancelled":
            return render.cancelled(tr)
        rendered = render.table_message(table, tr, self.bot_username)
        if self.app_buttons is not None:
            rendered = self.app_buttons.group(table, rendered, tr, self.bot_username)
        return rendered

    async def render_hand(self, table: Table, seat: int, mode: HandMode | None) -> Rendered:
        info = table.seats[seat]
        # A language chosen with /language in private wins over the Telegram one.
        chosen = (await self.storage.user(info.user_id)).lang if info.user_id else None
        tr = translator(negotiate(chosen or info.lang))
        if info.left:
            return render.hand_closed(table, tr)
        pick = None
        if mode is not None and mode[0] == "pick":
            pick = Card(mode[1])

        def full() -> Rendered:
            return render.hand(
                table, seat, tr, pick=pick, confirm_leave=mode is not None and mode[0] == "leave"
            )

        if self.app_buttons is not None:
            return await self.app_buttons.hand(table, seat, tr, full)
        return full()
