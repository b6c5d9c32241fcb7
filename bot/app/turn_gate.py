"""A turn timer never fires on a player whose hand for the current step is not on screen.

The outbox records, per player, the step of the last hand it saw land
(``Storage.mark_hand_shown``). When a turn deadline comes, every human the game waits
for must have that step on screen; if not (their chat answers 5xx, a send timed out),
the deadline waits until the hand is there (not for a hand shown as an ephemeral message in
the group, which Telegram does not promise to deliver). After ``max_wait_turns`` whole turn times
the game goes on regardless.
"""

from __future__ import annotations

import logging
import math

from bot.app.games import Games
from bot.domain import flow
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.roles import hand_role
from bot.store.storage import OwedOutput
from engine import must_act

log = logging.getLogger(__name__)


class TurnGate:
    def __init__(
        self,
        games: Games,
        *,
        poll: float = 1.0,
        max_poll: float = 5.0,
        max_wait_turns: float = 5.0,
    ) -> None:
        """``poll`` to ``max_poll``: how soon a hand not yet shown is looked at again."""
        self.games = games
        self.poll = poll
        self.max_poll = max_poll
        self.max_wait_turns = max_wait_turns
        self.postponed = 0

    async def fire(self, place: Place) -> None:
        """The scheduler's callback: postpone a due turn deadline, or run the timer."""
        # Only looked at: while hands are late this runs every few seconds per table.
        table = await self.games.storage.peek_table(place)
        if table is not None and table.phase == "playing":
            later = await self.postpone_until(table, self.games.clock())
            if later is not None:
                self.postponed += 1
                await self.games.scheduler.schedule(place, later)
                return
        await self.games.timer_fired(place)

    async def postpone_until(self, table: ChatGame, now: float) -> float | None:
        deadline = table.turn_deadline
        if deadline is None or deadline > now or flow.ai_turn(table, now) is not None:
            return None
        timing = flow.table_timing(table, self.games.timing)
        timeout = timing.turn_timeout
        if now - (deadline - timeout) > self.max_wait_turns * timeout:
            log.warning("chat %s: hands still not shown; the timer goes on", table.place)
            return None
        state = table.engine_state()
        window = table.wait_window or flow.wait_window(timing, must_act(state))
        # How soon a hand not yet on screen is looked at again (see below).
        look = max(self.poll, min(window / 2, self.max_poll))
        shown = await self.games.storage.hands_shown(table.place)
        owed: OwedOutput | None = None
        later: float | None = None
        for seat in flow.waiting(state):
            info = table.seats[seat]
            if not info.human or info.user_id is None or info.in_group:
                continue  # an ephemeral hand in the group: delivery is not promised
            if not (await self.games.storage.user(info.user_id)).dm_open:
                continue  # blocked the bot: no hand can ever be shown
            hand = shown.get(info.user_id)
            if hand is None or hand.game_id != table.game_id or hand.step < state.step:
                if await self.games.follows_in_app(table.place, info.user_id):
                    continue  # the app shows the turn live; the collapsed hand stays as is
                # Not on screen yet: look again within half a window (at most
                # ``max_poll``). A hand that lands meanwhile still gets its whole window
                # from landing (the branch below), so nobody loses time; a look every
                # second cost a read per table per second while a busy bot's hands lagged.
                # The outbox keeps retrying; a send that timed out long ago is reconciled
                # (sent again) on this ask, so the looks stay a few seconds apart. A hand
                # still owed is on some worker's way (or swept up after its lease): asking
                # too would make two workers edit in the same content, the second in vain.
                if owed is None:
                    owed = await self.games.storage.owed_output(table.place)
                user = info.user_id
                if hand_role(user) not in owed.targets and user not in owed.notify:
                    self.games.box.refresh_hand(table.place, user)
                later = min(later or math.inf, now + look)
            elif hand.at + window > now:
                # Shown late (a busy bot, a slow network): the whole wait counts from
                # when the buttons landed, not from the move that asked for them.
                later = min(later or math.inf, hand.at + window)
        return later
