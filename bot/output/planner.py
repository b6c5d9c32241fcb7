"""What each message should show now, decided from the records alone (no Redis, no Telegram).

A game keeps messages on screen, each named by its role (``bot.domain.roles``): the group
message (the lobby's, then the table's) and each player's hand: in their private chat, or,
for a player who plays from the group (``Seat.in_group``), as an ephemeral message there.
One message is one (group, role) pair everywhere: in the owed output (``owe:<role>``),
the screen record, the queue (``message_key``) and the claim on sending its replacement
(``send_slot``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.roles import (
    GROUP,
    Role,
    any_hand_owner,
    group_hand_owner,
    group_hand_role,
    hand_owner,
    hand_role,
)
from bot.store import owed_fields
from bot.store.storage import OwedOutput

NOTIFY_LATE = 2.0
"""A turn's notifying hand that leaves more than this long after its move asked for it is
edited in place instead (see ``late_notification``)."""

LIVE_PHASES = ("lobby", "playing")
"""A group message in these phases has buttons that act on the game."""


def hand_targets(table: ChatGame) -> list[int]:
    """The users whose hand message shows ``table`` (and so follows its changes): while it
    is played, and after it (finished, or cancelled because its place refuses the bot's
    messages: a cancelled lobby never had hand messages)."""
    if table.phase not in ("playing", "finished", "cancelled"):
        return []
    return [
        seat.user_id
        for seat in table.seats
        if seat.user_id is not None
        and (table.phase == "playing" or seat.hand_message_id or seat.group_hand_id)
    ]


def in_group(table: ChatGame, user_id: int) -> bool:
    """Whether ``user_id``'s hand is an ephemeral message in the group."""
    return any(seat.user_id == user_id and seat.in_group for seat in table.seats)


def hand_role_of(table: ChatGame, user_id: int) -> Role:
    """The role of ``user_id``'s hand: in their private chat, or in the group."""
    return group_hand_role(user_id) if in_group(table, user_id) else hand_role(user_id)


def hand_roles(table: ChatGame) -> list[Role]:
    """The roles of the hands that follow ``table``'s changes."""
    return [hand_role_of(table, user) for user in hand_targets(table)]


def private_hands(table: ChatGame) -> list[int]:
    """The users whose hand is in their private chat (only those are ever notified)."""
    return [user for user in hand_targets(table) if not in_group(table, user)]


def shown_in_group(table: ChatGame) -> set[int | None]:
    """The group messages the record holds (lobby, table)."""
    return {table.lobby_message_id, table.table_message_id}


def hand_message_ids(table: ChatGame, user_id: int) -> set[int | None]:
    """The hand messages the record holds for ``user_id``."""
    return {seat.hand_message_id for seat in table.seats if seat.user_id == user_id}


def group_hand_ids(table: ChatGame, user_id: int) -> set[int | None]:
    """The ephemeral hand messages the record holds for ``user_id``."""
    return {seat.group_hand_id for seat in table.seats if seat.user_id == user_id}


def message_ids(table: ChatGame, role: Role) -> set[int | None]:
    """The ids of ``role``'s messages that the record holds."""
    owner, in_the_group = hand_owner(role), group_hand_owner(role)
    if in_the_group is not None:
        return group_hand_ids(table, in_the_group)
    return shown_in_group(table) if owner is None else hand_message_ids(table, owner)


def message_key(place: Place, role: Role) -> Hashable:
    """A message's place in the queue of the chat it is in: requests for it merge there.
    A hand's chat is its owner's, holding their hands of every game; a group message is
    its topic's only one, also across a move to a supergroup (a refresh queued under the
    old id merges into the new id's: the topic stays)."""
    return (role, place.topic_id) if any_hand_owner(role) is None else (role, place)


def send_slot(role: Role, place: Place, game_id: str) -> str:
    """The name under which one worker at a time may send ``role``'s new message
    (``Storage.claim_send``, keyed by where it goes). Spelt as before roles had one name
    ("group:<game>", "hand:<place>:<game>"), so a fleet mid-upgrade shares each claim."""
    if group_hand_owner(role) is not None:
        return ":".join((role, place.text, game_id))
    where = (GROUP,) if hand_owner(role) is None else ("hand", place.text)
    return ":".join(str(part) for part in (*where, game_id))


def note_slot(note_id: str) -> str:
    """The send claim of an owed note: the note's own owed field."""
    return owed_fields.note(note_id)


def settles(role: Role) -> tuple[str, ...]:
    """The owed fields a refresh of ``role`` fulfils: its revision, and for a hand the
    notifying message (a refresh decides from the stored owed output whether it is one)."""
    owner = hand_owner(role)
    if owner is None:  # the group message, or a hand in the group (never notifying)
        return (owed_fields.owe(role),)
    return (owed_fields.owe(role), owed_fields.notify(owner))


def settled_fields(names: Iterable[str], covers: int | None) -> dict[str, int | None]:
    """What a job that is over clears (``Storage.settle_output``): notes and deletes
    whatever the revision; a refresh's fields up to the revision it read (``covers``; None:
    it failed before rendering, so it settles nothing of that kind)."""
    return {
        name: None if owed_fields.done_once(name) else covers
        for name in names
        if covers is not None or owed_fields.done_once(name)
    }


def shown_elsewhere(owed_target: Role | None, owed: OwedOutput) -> bool:
    """A move's refresh whose target is no longer owed: shown since, by any worker."""
    return owed_target is not None and owed.rev > 0 and owed_target not in owed.targets


@dataclass(frozen=True)
class HandRefresh:
    user_id: int
    notify: bool = False
    """As a new, notifying message (if the owed output still asks for one)."""
    calm: bool = False
    """After the calm delay, so a quick next change merges into it."""
    in_group: bool = False
    """The hand is an ephemeral message in the group (``Seat.in_group``)."""


def hand_refreshes(
    table: ChatGame, notify: Iterable[int] = (), calm: Iterable[int] = (), skip: Iterable[int] = ()
) -> list[HandRefresh]:
    """The hands a change of ``table`` refreshes, but those of ``skip`` (known to show
    what they would show)."""
    wake, later, same = set(notify), set(calm), set(skip)
    return [
        HandRefresh(uid, uid in wake, uid in later, in_group(table, uid))
        for uid in hand_targets(table)
        if uid not in same
    ]


@dataclass(frozen=True)
class RoleRefresh:
    role: Role
    owed: bool
    """Only while the stored owed output still asks for that role."""


def owed_refreshes(owed: OwedOutput) -> list[RoleRefresh]:
    """The refreshes that work off a chat's owed output: each owed role, then each hand
    owed as a notifying message without a revision."""
    roles = [
        RoleRefresh(role, owed=True)
        for role in owed.targets
        if role == GROUP or any_hand_owner(role) is not None
    ]
    notified = [
        RoleRefresh(hand_role(user), owed=False)
        for user in owed.notify
        if hand_role(user) not in owed.targets
    ]
    return roles + notified


@dataclass(frozen=True)
class GroupSpot:
    lobby: bool
    """The lobby message shows the record (else the table message)."""
    message_id: int | None
    """That message, if it was sent."""


def group_spot(table: ChatGame) -> GroupSpot | None:
    """Which group message shows ``table``; None: none (a cancelled lobby never shown)."""
    lobby = table.phase in ("lobby", "cancelled")
    current = table.lobby_message_id if lobby else table.table_message_id
    if table.phase == "cancelled" and current is None:
        return None
    return GroupSpot(lobby, current)


def hand_seat(table: ChatGame, user_id: int, *, group: bool = False) -> int | None:
    """The seat whose hand ``user_id``'s message shows; None: no hand to show (no seat,
    the hand is shown elsewhere, or the game is over and the hand was never sent).
    ``group``: the hand as an ephemeral message in the group (else in private)."""
    if table.state is None:
        return None
    seat = next((i for i, s in enumerate(table.seats) if s.user_id == user_id), None)
    if seat is None or table.seats[seat].in_group != group:
        return None
    shown = table.seats[seat].group_hand_id if group else table.seats[seat].hand_message_id
    if table.phase != "playing" and shown is None:
        return None
    return seat


def notifies(user_id: int, owed: OwedOutput, asked: bool) -> bool:
    """Whether the hand comes as a new, notifying message: as the owed output in Redis says
    (so one notification is sent once, whichever worker sends it), or as asked when the
    chat owes nothing at all."""
    return user_id in owed.notify or (owed.rev == 0 and asked)


def late_notification(
    table: ChatGame, message_id: int | None, asked_at: float | None, started_at: float
) -> bool:
    """Whether a turn's notification goes out as an edit: the hand message exists, the job
    started more than ``NOTIFY_LATE`` after it was asked for, and it is not the reminder
    before a timeout (that one always comes as a new message). The job counts from when it
    first looked: the wait for the chat's pacing after that is the same for a send as for
    an edit."""
    if message_id is None or asked_at is None or table.phase != "playing":
        return False
    if table.state is not None and table.reminded_step == table.state.get("step"):
        return False
    return started_at - asked_at > NOTIFY_LATE


def step_of(table: ChatGame) -> int:
    return int((table.state or {}).get("step", 0))
