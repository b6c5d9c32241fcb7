"""The messages a game keeps on screen, each named by one role: the group message, a hand.

A role names a message in every record that speaks of one: owed output's targets, the
screen record, send claims. ``"group"`` is the game's message in its place; ``"hand:<user
id>"`` is that player's hand in their private chat; ``"ghand:<user id>"`` is that player's
hand shown as an ephemeral message in the group (for a player without a private chat).
This module is the only place that spells them.
"""

from __future__ import annotations

from typing import Final

Role = str
"""``GROUP`` or what ``hand_role`` or ``group_hand_role`` returns."""

GROUP: Final[Role] = "group"
_HAND: Final = "hand:"
_GROUP_HAND: Final = "ghand:"


def hand_role(user_id: int) -> Role:
    return f"{_HAND}{user_id}"


def hand_owner(role: Role) -> int | None:
    """The user whose hand ``role`` names, or None for the group message."""
    return int(role.removeprefix(_HAND)) if role.startswith(_HAND) else None


def group_hand_role(user_id: int) -> Role:
    return f"{_GROUP_HAND}{user_id}"


def group_hand_owner(role: Role) -> int | None:
    """The user whose ephemeral hand in the group ``role`` names, or None."""
    return int(role.removeprefix(_GROUP_HAND)) if role.startswith(_GROUP_HAND) else None


def any_hand_owner(role: Role) -> int | None:
    """The user whose hand ``role`` names, wherever it is shown; None: the group message."""
    owner = hand_owner(role)
    return owner if owner is not None else group_hand_owner(role)
