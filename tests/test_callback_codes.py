"""Every button operation goes through the codec's one table and comes back the same."""

from __future__ import annotations

from typing import get_args

from bot.domain import callbacks
from bot.domain.callbacks import HAND_CODES, GroupButton, HandButton
from bot.domain.place import Place
from bot.telegram.group_buttons import GROUP_ROUTES
from bot.telegram.hand_buttons import HAND_ROUTES
from engine import Attack, Beat, Card, Pass, Swap, Take, Transfer

CHAT, GAME, STEP = -1001234567890, "abc123", 42
MOVES = (
    Attack((Card(0), Card(13), Card(26))),
    Beat(Card(1), Card(14)),
    Transfer(Card(2)),
    Swap(Card(3)),
    Take(),
    Pass(),
)


def test_every_group_op_round_trips() -> None:
    assert frozenset(GROUP_ROUTES) == callbacks.GROUP_OPS
    for op in callbacks.GROUP_OPS:
        assert callbacks.decode(callbacks.encode_group(GAME, op)) == GroupButton(GAME, op)


def test_every_hand_op_round_trips() -> None:
    assert frozenset(get_args(callbacks.HandOp)) == callbacks.HAND_OPS
    assert {entry.op for entry in HAND_CODES.values()} == callbacks.HAND_OPS
    assert frozenset(HAND_ROUTES) == callbacks.HAND_OPS
    seen = set()
    for action in MOVES:
        data = callbacks.encode_move(Place(CHAT), GAME, STEP, action)
        assert callbacks.decode(data) == HandButton(Place(CHAT), GAME, STEP, "move", action)
        seen.add(data.rsplit(":", 1)[1][0])
    pick = callbacks.encode_pick(Place(CHAT), GAME, STEP, Card(51))
    assert callbacks.decode(pick) == HandButton(Place(CHAT), GAME, STEP, "pick", card=Card(51))
    seen.add(pick.rsplit(":", 1)[1][0])
    for op in ("back", "leave", "leave_yes", "take_back", "play_here", "review"):
        data = callbacks.encode_hand_op(Place(CHAT), GAME, STEP, op)
        assert callbacks.decode(data) == HandButton(Place(CHAT), GAME, STEP, op)
        seen.add(data.rsplit(":", 1)[1])
    assert seen == set(HAND_CODES)  # every code of the table is made by some encoder


def test_the_wire_format_stays_as_it_was() -> None:
    """Keyboards already in chats carry these exact bytes."""
    assert callbacks.encode_move(Place(5), GAME, 3, Beat(Card(1), Card(27))) == "h:5:abc123:3:BbB"
    assert (
        callbacks.encode_move(Place(5), GAME, 3, Attack((Card(0), Card(26)))) == "h:5:abc123:3:aaA"
    )
    assert callbacks.encode_move(Place(5), GAME, 3, Take()) == "h:5:abc123:3:t"
    assert callbacks.encode_move(Place(5), GAME, 3, Swap(Card(25))) == "h:5:abc123:3:sz"
    assert callbacks.encode_pick(Place(5), GAME, 3, Card(2)) == "h:5:abc123:3:bc"
    assert callbacks.encode_hand_op(Place(5), GAME, 0, "take_back") == "h:5:abc123:0:m"
    assert callbacks.encode_hand_op(Place(5), GAME, 3, "leave_yes") == "h:5:abc123:3:Q"
    assert callbacks.encode_hand_op(Place(5), GAME, 0, "review") == "h:5:abc123:0:v"
