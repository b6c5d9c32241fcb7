"""The bot's core: runs flow operations through storage, then timers and output.

Handlers and the scheduler call this; it knows nothing about updates or queries. It
also sets each hand's transient mode (picking a beat target, confirming Leave), which
``Screens`` keeps and renders.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Concatenate, NamedTuple, ParamSpec

from bot.app.ai_runner import AiRunner, ai_seed
from bot.app.rights import BotRights
from bot.app.scheduler import Scheduler
from bot.app.screens import Screens, unreachable
from bot.app.tidy import Tidy
from bot.domain import flow
from bot.domain.flow import Effects, FlowError, Moment, Outcome, Timing
from bot.domain.hand_modes import HandMode
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.roles import GROUP, hand_role
from bot.ops import metrics
from bot.output.outbox import Outbox, hand_roles, private_hands
from bot.store.storage import Owed, Storage, Write

__all__ = ["Games", "Timing"]

log = logging.getLogger(__name__)

P = ParamSpec("P")
Operation = Callable[Concatenate[ChatGame | None, Moment, P], Outcome]
"""A flow operation: ``op(game, moment, *args) -> (ChatGame, Effects)``."""


CRASH_AFTER_COMMIT = "DURAK_CRASH_AFTER_COMMIT"
"""Fault tests only: the worker exits at once after its N-th committed move (or, with
"end", after the move that ends a game), before any output is sent (a power cut there)."""
CRASH_EXIT_CODE = 86


class Committed(NamedTuple):
    """A stored change, not shown yet (``Games.commit``, then ``Games.show``)."""

    game: ChatGame
    effects: Effects
    owed: Owed


def owed_by(game: ChatGame, effects: Effects) -> Owed:
    """What a committed change must show: every message that follows the record, the
    hands re-sent as new messages, and the new group messages (sent once each). A game
    whose place refuses the bot's messages owes nothing there: only the private hands,
    each re-sent as a new message that says the game ended."""
    # A hand in the group is never sent anew unasked: only private hands notify.
    private = private_hands(game)
    notifying = game.phase == "playing" or effects.place_gone
    notify = sorted(effects.notify & set(private)) if notifying else []
    if effects.place_gone:
        return Owed([hand_role(uid) for uid in private], notify, [])
    notes: list[dict[str, Any]] = [
        {"kind": "announce", "key": note.key, "kwargs": note.kwargs} for note in effects.announce
    ]
    if effects.ended:
        # A new message, so the group is notified of the ending.
        notes.append({"kind": "results", "game_id": game.game_id})
    return Owed([GROUP, *hand_roles(game)], notify, notes)


TimerFire = Callable[[Place], Awaitable[None]]
"""What the scheduler calls when a game's timer is due (with its place)."""


class Games:
    def __init__(
        self,
        storage: Storage,
        timing: Timing,
        ai: AiRunner,
        *,
        outbox: Outbox,
        screens: Screens,
        on_change: Iterable[Callable[[ChatGame, Effects], Awaitable[None]]] = (),
        fire_through: Callable[[Games], TimerFire] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``fire_through``: what due timers go through before ``timer_fired`` (made
        from this object: the turn gate asks it about the game)."""
        self.storage = storage
        self.timing = timing
        self.ai = ai
        self.clock = clock
        self.outbox = outbox
        self.screens = screens
        self.languages = screens.languages
        self.app_buttons = screens.app_buttons
        self.render_group = screens.group
        self.render_hand = screens.hand
        self.render_note = screens.note
        self.on_change = list(on_change)
        """Called after every committed change (the Mini App's live events)."""
        fire = fire_through(self) if fire_through is not None else self.timer_fired
        self.scheduler = Scheduler(storage, fire, sweep=self.sweep_output, clock=clock)
        self.rights = BotRights(outbox.bot)
        """The bot's rights in a group (players without a private chat, tidy-up)."""
        self.tidy = Tidy(storage, outbox, self.rights, clock)
        self._commits = 0
        self._crash_after = os.environ.get(CRASH_AFTER_COMMIT, "")

    @property
    def box(self) -> Outbox:
        return self.outbox

    @property
    def bot_username(self) -> str:
        return self.screens.name.username

    @bot_username.setter
    def bot_username(self, username: str) -> None:
        """Learned from Telegram at start; the messages' links use it from then on."""
        self.screens.name.username = username

    # --- changing a game --------------------------------------------------------------------

    async def run(
        self, place: Place, operation: Operation[P], *args: P.args, **kwargs: P.kwargs
    ) -> ChatGame:
        """Apply a flow operation atomically, then show the result and set the next timer.

        A refused operation raises ``FlowError`` and changes nothing. Between the commit
        and the show the outbox does not count as idle: output is on its way."""
        with self.box.coming():
            committed = await self.commit(place, operation, *args, **kwargs)
            await self.show(committed)
        return committed.game

    async def commit(
        self, place: Place, operation: Operation[P], *args: P.args, **kwargs: P.kwargs
    ) -> Committed:
        """``run``'s first half: the change stored (with what it owes the screen). A tap
        is answered right after it; ``show`` must follow."""
        moment = Moment(self.clock(), self.timing)
        owed: list[Owed] = []

        def step(current: ChatGame | None) -> Write[Outcome]:
            game, effects = operation(current, moment, *args, **kwargs)
            owed[:] = [owed_by(game, effects)]  # the last attempt is the one stored
            return Write(game, (game, effects), stats=effects.stats, output=owed[0])

        game, effects = await self.storage.update_table(place, step)
        if self._crash_after:
            self._crash_point(effects.ended)
        metrics.move_applied(getattr(operation, "__name__", "operation"))
        return Committed(game, effects, owed[0])

    def _crash_point(self, ended: bool) -> None:
        self._commits += 1
        at = self._crash_after
        if (at == "end" and ended) or at == str(self._commits):
            log.error("%s=%s: exiting right after the commit", CRASH_AFTER_COMMIT, at)
            logging.shutdown()
            os._exit(CRASH_EXIT_CODE)

    async def show(self, committed: Committed) -> None:
        """``run``'s second half: listeners, output and the next timer. This worker shows
        what it just stored (the record in Redis says the same, so another worker
        finishes it if this one dies)."""
        game, effects, owed = committed
        for listener in self.on_change:
            await listener(game, effects)
        # A listener may drop a notification (the player follows in the Mini App): the
        # stored one goes too, and so does the refresh of a hand that stays as it is.
        # A crash before this only costs that player one extra ping or edit.
        unchanged = await self._unchanged_hands(game, effects.in_app)
        fields: dict[str, int | None] = {
            f"new:{user}": owed.rev for user in (set(owed.notify) - effects.notify) | unchanged
        }
        fields.update({f"owe:hand:{user}": owed.rev for user in unchanged})
        if fields:
            await self.storage.settle_output(game.place, fields)
        due = flow.next_due(game)
        if due is not None and game.phase == "playing":
            await self.scheduler.schedule(game.place, due)
        self.box.refresh(game, effects.notify, effects.calm, skip=unchanged, owed=True)
        for note_id in owed.note_ids:
            self.box.send_note(game.place, note_id, self.render_note)
        if effects.ended:
            try:
                await self.tidy.game_over(game)
            except Exception:  # the game is stored and shown: only tidy-up is missed
                log.exception("chat %s: could not tidy up after the game", game.place)

    async def _unchanged_hands(self, game: ChatGame, in_app: set[int]) -> set[int]:
        """Players in the Mini App whose hand message, as this process knows, already
        shows just the app's buttons: it would be rendered the same, so no job at all
        (a move used to cost each of them a record read, a presence read and two marks)."""
        if not in_app or game.phase != "playing":
            return set()
        unchanged = set()
        for seat, info in enumerate(game.seats):
            if info.user_id in in_app and info.hand_message_id is not None:
                content = await self.render_hand(game, seat, in_app=True)
                if await self.box.shows_hand(
                    game.place, info.user_id, info.hand_message_id, content
                ):
                    unchanged.add(info.user_id)
        return unchanged

    async def follows_in_app(self, place: Place, user_id: int) -> bool:
        """The user has the Mini App open on this place's game (it shows every turn live)."""
        buttons = self.app_buttons
        return buttons is not None and await buttons.presence.in_app(place, user_id)

    async def sweep_output(self, now: float) -> None:
        """Keep the output this worker is sending leased, and take over what a dead one
        left (see ``Storage.claim_owed_output``)."""
        await self.storage.renew_output_leases(now, self.box.owing_places())
        for place, owed in await self.storage.claim_owed_output(now):
            log.info("chat %s: sending the output another worker left (rev %d)", place, owed.rev)
            self.box.deliver(place, owed, self.render_note)
        await self.tidy.sweep()  # tidy-up's deletes that are due

    # --- hand modes -------------------------------------------------------------------------

    def set_mode(
        self,
        place: Place,
        user_id: int,
        game_id: str,
        step: int,
        mode: HandMode | None,
        *,
        in_group: bool = False,
    ) -> None:
        """Show ``user_id``'s hand in ``mode`` (None: the normal keyboard); ``in_group``:
        their hand is the ephemeral one in the group."""
        if mode is None:
            self.screens.modes.clear(place, user_id)
        else:
            self.screens.modes.set(place, user_id, game_id, step, mode)
        self.box.refresh_hand(place, user_id, in_group=in_group)

    def clear_mode(self, place: Place, user_id: int) -> None:
        self.screens.modes.clear(place, user_id)

    # --- timers and computer seats ----------------------------------------------------------

    async def timer_fired(self, place: Place) -> None:
        # Looked at, not changed (``run`` reads its own copy): the shared parse will do.
        game = await self.storage.peek_table(place)
        if game is None or game.phase != "playing":
            return
        now = self.clock()
        turn = flow.ai_turn(game, now)
        # Someone may have moved first; the new state then has its own timer.
        with contextlib.suppress(FlowError):
            if turn is not None:
                seat, view = turn
                level = game.seats[seat].ai or "normal"
                action = await self.ai.choose(level, ai_seed(game.game_id, view.step, seat), view)
                await self.run(place, flow.ai_move, game.game_id, seat, view.step, action)
            elif game.turn_deadline is not None and game.turn_deadline <= now:
                await self.run(place, flow.on_timeout)
            elif game.reminder_due is not None and game.reminder_due <= now:
                await self.run(place, flow.remind)
        await self.ensure_timer(place)

    async def ensure_timer(self, place: Place) -> None:
        game = await self.storage.peek_table(place)
        if game is not None and game.phase == "playing":
            due = flow.next_due(game)
            if due is not None:
                await self.scheduler.schedule(place, due)

    async def resume(self) -> None:
        """After a start: every running game gets its timer and a fresh look."""
        for place in await self.storage.running_places():
            game = await self.storage.load_table(place)
            if game is None or game.phase != "playing":
                continue
            due = flow.next_due(game)
            if due is not None:
                await self.scheduler.schedule(place, due)
            self.box.refresh(game)

    async def unreachable(self, game: ChatGame) -> set[int]:
        """The seated people the bot cannot write to in private (their user ids)."""
        return await unreachable(self.storage, game)
