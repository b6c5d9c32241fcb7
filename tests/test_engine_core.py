"""The rules core's positions: field numbers, conversions and copies."""

from __future__ import annotations

from engine import PRESETS, Rules, apply, core, legal_actions, new_game, waiting_for
from engine.state import State


def _as_state_fields(position: core.Position) -> list[object]:
    fields = position[: core.EMPTIED]
    fields[core.HANDS] = tuple(fields[core.HANDS])
    return fields


def test_field_numbers_follow_the_state_fields() -> None:
    """A position is ``list(state)`` plus ``EMPTIED``: each number names its field."""
    for index, name in enumerate(State._fields):
        assert getattr(core, name.upper()) == index, name
    assert len(State._fields) == core.EMPTIED


def test_thaw_and_freeze_round_trip_and_leave_the_state_alone() -> None:
    state = new_game(Rules.preset("perevodnoy"), 3, seed=5)
    for _ in range(40):
        p = waiting_for(state)[0]
        action = legal_actions(state, p)[-1]
        before = state.to_json()
        position = core.thaw(state)
        assert _as_state_fields(position) == list(state)
        after = apply(state, p, action)
        assert state.to_json() == before  # the step played on a copy
        assert after.step == state.step + 1 and after.history == (state.history, after.events)
        state = after
        if state.over:
            break


def test_a_copy_is_independent() -> None:
    for name in sorted(PRESETS):
        state = new_game(Rules.preset(name), 2, seed=1)
        position = core.thaw(state)
        twin = core.copy(position)
        p = core.actor(position)
        core.play(twin, p, legal_actions(state, p)[0])
        assert _as_state_fields(position) == list(state)
        assert twin[core.HANDS][p] != position[core.HANDS][p]
