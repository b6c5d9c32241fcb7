"""Who the game waits on, as everyone at the table may know it.

``engine.waiting_for`` reads the hidden hands (it lists only attackers who hold a card
of a rank on the table), so it may drive a server but never be shown. ``must_act``
uses public facts only: seats, roles, hand sizes and the table. Not passes: who
passed is the passer's own business (see ``engine.view``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.game import may_add_by_seat
from engine.state import State

TurnKind = Literal["lead", "defend", "throw_in", "over"]


@dataclass(frozen=True, slots=True)
class MustAct:
    """What the game waits for now.

    - ``lead``: ``player`` (the attacker) must lead the bout; ``may_add`` is empty.
    - ``defend``: ``player`` (the defender) must beat, take or transfer; meanwhile the
      attackers in ``may_add`` may add cards.
    - ``throw_in``: every card is beaten, or the defender takes; the bout ends once
      nobody adds any more. ``player`` is None.
    - ``over``: the game is over; ``player`` is None and ``may_add`` empty.

    ``may_add`` lists the attackers whose *seat* lets them add cards now (not the
    defender or a partner of theirs, not out, holding cards, room on the table; with
    ``throw_in="neighbours"`` only the attacker and the defender's left neighbour), the
    attacker first, then clockwise. Whether they hold a matching card, and whether they
    passed, is hidden, so the list depends on neither: the game may move on without
    some of them (nobody who could add is left).
    """

    kind: TurnKind
    player: int | None
    may_add: tuple[int, ...]

    @property
    def seats(self) -> tuple[int, ...]:
        """Everyone the game may wait on: ``player`` (if any) first, then ``may_add``."""
        return self.may_add if self.player is None else (self.player, *self.may_add)


_OVER = MustAct("over", None, ())


def must_act(state: State) -> MustAct:
    """Who the game waits on, from public information only (see ``MustAct``)."""
    if state.over:
        return _OVER
    if not state.attack:
        return MustAct("lead", state.attacker, ())
    may_add: tuple[int, ...] = ()
    if len(state.attack) < state.limit:
        n, attacker = state.num_players, state.attacker
        may_add = tuple(
            seat
            for seat in ((attacker + k) % n for k in range(n))
            if state.hands[seat] != 0  # hand sizes are public
            and may_add_by_seat(state, seat)
        )
    if not state.taking and None in state.defense:
        return MustAct("defend", state.defender, may_add)
    return MustAct("throw_in", None, may_add)


__all__ = ["MustAct", "TurnKind", "must_act"]
