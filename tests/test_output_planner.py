"""The outbox's planner: what each message should show, from the records alone."""

from __future__ import annotations

from typing import Any

import pytest

from bot.domain.place import Place
from bot.domain.records import ChatGame, Phase, Seat
from bot.domain.roles import GROUP, group_hand_role, hand_role
from bot.output import planner
from bot.output.planner import GroupSpot, HandRefresh, RoleRefresh
from bot.store.storage import OwedOutput

GROUP_ID, ANN, BOB, CAT = -100, 1, 2, 3


def game(phase: Phase = "playing", **fields: Any) -> ChatGame:
    seats = fields.pop(
        "seats",
        [
            Seat(user_id=ANN, name="Ann", hand_message_id=11),
            Seat(user_id=BOB, name="Bob"),
            Seat(name="Computer"),
        ],
    )
    state = fields.pop("state", {"step": 4})
    return ChatGame(
        game_id="g1",
        chat_id=GROUP_ID,
        creator_id=ANN,
        phase=phase,
        seats=seats,
        state=state,
        **fields,
    )


def owed(
    rev: int = 0, targets: dict[str, int] | None = None, notify: dict[int, int] | None = None
) -> OwedOutput:
    return OwedOutput(rev, targets or {}, notify or {}, {})


# --- which messages follow a table --------------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "hands"),
    [("lobby", []), ("cancelled", [ANN]), ("playing", [ANN, BOB]), ("finished", [ANN])],
)
def test_hands_follow_a_running_game_and_a_finished_one_they_showed(
    phase: Phase, hands: list[int]
) -> None:
    """A cancelled game with hands on screen ended because its place refuses the bot's
    messages (``flow.place_gone``): its hands say so."""
    assert planner.hand_targets(game(phase)) == hands


def test_a_cancelled_lobby_has_no_hands_to_follow() -> None:
    seats = [Seat(user_id=ANN, name="Ann"), Seat(user_id=BOB, name="Bob")]
    assert planner.hand_targets(game("cancelled", seats=seats, state=None)) == []


def test_the_record_names_each_roles_messages() -> None:
    table = game(lobby_message_id=5, table_message_id=6)
    assert planner.shown_in_group(table) == {5, 6}
    assert planner.message_ids(table, GROUP) == {5, 6}
    assert planner.message_ids(table, hand_role(ANN)) == {11}
    assert planner.message_ids(table, hand_role(BOB)) == {None}
    assert planner.message_ids(table, hand_role(CAT)) == set()


def test_a_refresh_skips_hands_known_to_show_what_they_would() -> None:
    refreshes = planner.hand_refreshes(game(), notify=[BOB], calm=[ANN], skip=[])
    assert refreshes == [HandRefresh(ANN, notify=False, calm=True), HandRefresh(BOB, notify=True)]
    assert planner.hand_refreshes(game(), skip=[ANN]) == [HandRefresh(BOB)]


# --- one name per message -----------------------------------------------------------------


def test_a_messages_send_slot_comes_from_its_role_spelt_as_before() -> None:
    """The claim on sending a replacement is stored in Redis: a fleet mid-upgrade must
    share it, so it keeps the spelling it had ("group:<game>", "hand:<group>:<game>")."""
    assert planner.send_slot(GROUP, Place(GROUP_ID), "g1") == "group:g1"
    assert planner.send_slot(hand_role(ANN), Place(GROUP_ID), "g1") == f"hand:{GROUP_ID}:g1"
    assert planner.note_slot("0001") == "note:0001"


def test_one_message_is_one_key_in_its_chats_queue() -> None:
    ann = hand_role(ANN)
    assert planner.message_key(Place(GROUP_ID), ann) == planner.message_key(Place(GROUP_ID), ann)
    assert planner.message_key(Place(GROUP_ID), ann) != planner.message_key(
        Place(-7), ann
    )  # her other game
    assert planner.message_key(Place(GROUP_ID), GROUP) != planner.message_key(Place(GROUP_ID), ann)
    # A group's lane follows it to its supergroup id: its refreshes still merge there.
    assert planner.message_key(Place(GROUP_ID), GROUP) == planner.message_key(
        Place(-1_000_100), GROUP
    )


# --- owed output --------------------------------------------------------------------------


def test_a_refresh_settles_its_roles_revision_and_a_hand_its_notification() -> None:
    assert planner.settles(GROUP) == ("owe:group",)
    assert planner.settles(hand_role(ANN)) == (f"owe:hand:{ANN}", f"new:{ANN}")


def test_notes_and_deletes_settle_whatever_the_revision_refreshes_up_to_theirs() -> None:
    names = ("owe:group", f"new:{ANN}", "note:0001", "del:5:9")
    assert planner.settled_fields(names, 7) == {
        "owe:group": 7,
        f"new:{ANN}": 7,
        "note:0001": None,
        "del:5:9": None,
    }
    # A refresh that failed before it read the owed output settles no revision.
    assert planner.settled_fields(names, None) == {"note:0001": None, "del:5:9": None}


def test_a_moves_refresh_is_shown_elsewhere_once_its_role_is_no_longer_owed() -> None:
    role = hand_role(ANN)
    assert planner.shown_elsewhere(role, owed(3, {GROUP: 3}))
    assert not planner.shown_elsewhere(role, owed(3, {role: 3}))
    assert not planner.shown_elsewhere(None, owed(3, {GROUP: 3}))  # must run regardless
    assert not planner.shown_elsewhere(role, owed(0))  # the chat never owed anything


def test_a_sweep_refreshes_each_owed_role_then_each_hand_owed_only_a_notification() -> None:
    pending = owed(5, {hand_role(ANN): 4, GROUP: 5, "unknown": 5}, {ANN: 4, BOB: 5})
    assert planner.owed_refreshes(pending) == [
        RoleRefresh(hand_role(ANN), owed=True),
        RoleRefresh(GROUP, owed=True),
        RoleRefresh(hand_role(BOB), owed=False),
    ]


# --- the group message --------------------------------------------------------------------


def test_the_lobby_message_shows_a_lobby_and_the_table_message_the_game() -> None:
    assert planner.group_spot(game("lobby", lobby_message_id=5)) == GroupSpot(True, 5)
    assert planner.group_spot(game("lobby")) == GroupSpot(True, None)
    assert planner.group_spot(game("playing", lobby_message_id=5)) == GroupSpot(False, None)
    assert planner.group_spot(game("finished", table_message_id=6)) == GroupSpot(False, 6)
    assert planner.group_spot(game("cancelled", lobby_message_id=5)) == GroupSpot(True, 5)
    assert planner.group_spot(game("cancelled")) is None  # never shown: nothing to say


# --- a hand -------------------------------------------------------------------------------


def test_a_hand_shows_its_owners_seat_while_there_is_one_to_show() -> None:
    assert planner.hand_seat(game(), BOB) == 1
    assert planner.hand_seat(game(), CAT) is None  # not seated
    assert planner.hand_seat(game(state=None), ANN) is None  # not dealt
    assert planner.hand_seat(game("finished"), ANN) == 0  # its last state
    assert planner.hand_seat(game("finished"), BOB) is None  # never sent: not now either


def test_a_hand_notifies_as_the_owed_output_says_or_as_asked_when_nothing_is_owed() -> None:
    assert planner.notifies(ANN, owed(3, notify={ANN: 3}), asked=False)
    assert not planner.notifies(ANN, owed(3, notify={BOB: 3}), asked=True)
    assert planner.notifies(ANN, owed(0), asked=True)
    assert not planner.notifies(ANN, owed(0), asked=False)


@pytest.mark.parametrize(
    ("message_id", "asked_at", "started_at", "late"),
    [
        (11, 100.0, 100.0 + planner.NOTIFY_LATE + 0.5, True),
        (11, 100.0, 100.0 + planner.NOTIFY_LATE - 0.5, False),
        (None, 100.0, 110.0, False),  # no message to edit: it must be sent
        (11, None, 110.0, False),  # not asked by a move
    ],
)
def test_a_turns_notification_that_would_leave_late_is_an_edit(
    message_id: int | None, asked_at: float | None, started_at: float, late: bool
) -> None:
    assert planner.late_notification(game(), message_id, asked_at, started_at) is late


def test_the_reminder_before_a_timeout_and_a_finished_game_are_never_quieted() -> None:
    reminded = game(reminded_step=4)
    assert not planner.late_notification(reminded, 11, 100.0, 110.0)
    assert not planner.late_notification(game("finished"), 11, 100.0, 110.0)


def test_the_step_a_hand_shows() -> None:
    assert planner.step_of(game()) == 4
    assert planner.step_of(game(state={})) == 0


# --- a hand shown as an ephemeral message in the group ------------------------------------


def with_bob_in_group(phase: Phase = "playing", group_hand_id: int | None = 7) -> ChatGame:
    return game(
        phase,
        seats=[
            Seat(user_id=ANN, name="Ann", hand_message_id=11),
            Seat(user_id=BOB, name="Bob", in_group=True, group_hand_id=group_hand_id),
            Seat(name="Computer"),
        ],
    )


def test_a_hand_in_the_group_is_one_more_hand_target_under_its_own_role() -> None:
    table = with_bob_in_group()
    assert planner.hand_targets(table) == [ANN, BOB]
    assert planner.hand_roles(table) == [hand_role(ANN), group_hand_role(BOB)]
    assert planner.private_hands(table) == [ANN]  # only those ever notify
    assert planner.message_ids(table, group_hand_role(BOB)) == {7}
    assert planner.message_ids(table, hand_role(BOB)) == {None}
    refreshes = planner.hand_refreshes(table, notify=[BOB])
    assert refreshes == [HandRefresh(ANN), HandRefresh(BOB, notify=True, in_group=True)]
    # Shown once, it follows the finished game to its result; never shown, it does not.
    assert planner.hand_targets(with_bob_in_group("finished")) == [ANN, BOB]
    assert planner.hand_targets(with_bob_in_group("finished", None)) == [ANN]


def test_a_hand_in_the_group_is_shown_there_and_only_there() -> None:
    table = with_bob_in_group()
    assert planner.hand_seat(table, BOB, group=True) == 1
    assert planner.hand_seat(table, BOB) is None  # never in his private chat
    assert planner.hand_seat(table, ANN, group=True) is None


def test_a_hand_in_the_group_has_its_own_key_slot_and_owed_field() -> None:
    place, role = Place(GROUP_ID), group_hand_role(BOB)
    assert planner.message_key(place, role) not in (
        planner.message_key(place, GROUP),
        planner.message_key(place, hand_role(BOB)),
    )
    assert planner.send_slot(role, place, "g1") == f"ghand:{BOB}:{GROUP_ID}:g1"
    assert planner.settles(role) == (f"owe:ghand:{BOB}",)  # it never notifies
    pending = owed(5, {role: 5, GROUP: 5})
    assert planner.owed_refreshes(pending) == [
        RoleRefresh(role, owed=True),
        RoleRefresh(GROUP, owed=True),
    ]
