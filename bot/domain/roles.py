"""The messages a game keeps on screen, each named by one role: the group message, a hand.

A role names a message in every record that speaks of one: owed output's targets, the
screen record, send claims. ``"group"`` is the game's message in its place; ``"hand:<user
id>"`` is that player's hand. This module is the only place that spells them.
"""

from __future__ import annotations

from typing import Final

Role = str
"""``GROUP`` or what ``hand_role`` returns."""

GROUP: Final[Role] = "group"
_HAND: Final = "hand:"


def hand_role(user_id: int) -> Role:
    return f"{_HAND}{user_id}"


def hand_owner(role: Role) -> int | None:
    """The user whose hand ``role`` names, or None for the group message."""
    return int(role.removeprefix(_HAND)) if role.startswith(_HAND) else None
