"""Fast unit tests of the pure parts: callback codec, game flow, rendering."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import render
from bot.domain import callbacks, flow
from bot.domain.callbacks import CallbackError, HandButton
from bot.domain.flow import FlowError, Moment, Person, Timing
from bot.domain.lobby_options import LOBBY_OPTIONS
from bot.domain.place import Place
from bot.domain.records import ChatGame
from engine import (
    Attack,
    Beat,
    Card,
    Pass,
    Rules,
    Swap,
    Take,
    Transfer,
    legal_actions,
    view,
)
from engine.events import Took
from locales import translator

CHAT = -1009876543210
GID = "ab12cd"
ANN, BOB = Person(1, "Ann <b>"), Person(2, "Bob")
TIMING = Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=0.0)


def at(now: float, notify_quiet: float = 0.0) -> Moment:
    return Moment(now, Timing(TIMING.turn_timeout, TIMING.ai_delay, notify_quiet))


T0 = at(0.0)
cards = st.integers(0, 51).map(Card)


@given(
    st.one_of(
        st.lists(cards, min_size=1, max_size=6, unique=True).map(lambda c: Attack(tuple(c))),
        st.lists(cards, min_size=2, max_size=2, unique=True).map(lambda p: Beat(*p)),
        st.just(Take()),
        st.just(Pass()),
        cards.map(Transfer),
        cards.map(Swap),
    ),
    st.integers(0, 9_999_999),
)
def test_every_move_fits_64_bytes_and_round_trips(action: object, step: int) -> None:
    data = callbacks.encode_move(Place(CHAT), GID, step, action)  # type: ignore[arg-type]
    assert len(data.encode()) <= 64
    decoded = callbacks.decode(data)
    assert decoded == HandButton(Place(CHAT), GID, step, "move", action)  # type: ignore[arg-type]


def test_a_keyboard_without_steps_is_what_its_buttons_do() -> None:
    first, later = (callbacks.encode_move(Place(CHAT), GID, step, Take()) for step in (3, 1234))
    assert first != later
    assert callbacks.without_steps(first) == callbacks.without_steps(later)
    assert callbacks.without_steps(first) != callbacks.without_steps(
        callbacks.encode_move(Place(CHAT), GID, 3, Pass())
    )
    keyboard = repr([first, callbacks.encode_pick(Place(CHAT), GID, 7, Card.parse("9♥"))])
    assert callbacks.without_steps(keyboard) == repr(
        [f"h:{CHAT}:{GID}::t", f"h:{CHAT}:{GID}::b" + callbacks.ALPHABET[int(Card.parse("9♥"))]]
    )
    group = callbacks.encode_group(GID, "join")
    assert callbacks.without_steps(group) == group


@given(st.text(max_size=80))
def test_forged_data_never_decodes_to_garbage(data: str) -> None:
    try:
        decoded = callbacks.decode(data)
    except CallbackError:
        return
    # Whatever decodes must re-encode to exactly the same data.
    if isinstance(decoded, HandButton) and decoded.op == "move":
        assert decoded.action is not None
        again = callbacks.encode_move(decoded.place, decoded.game_id, decoded.step, decoded.action)
        assert again == data


def test_group_and_language_buttons() -> None:
    for op in ("join", "start", "new", "ai_hard", "series"):
        data = callbacks.encode_group(GID, op)  # type: ignore[arg-type]
        assert callbacks.decode(data) == callbacks.GroupButton(GID, op)  # type: ignore[arg-type]
    assert callbacks.decode("l:de") == callbacks.LanguageButton("de")
    with pytest.raises(CallbackError):
        callbacks.decode("g:ab12cd:Z")


def lobby(title: str = "Club", creator: Person = ANN, rules: Rules | None = None) -> ChatGame:
    game, _ = flow.new_lobby(None, T0, Place(CHAT), title, creator, GID)
    if rules is not None:
        game.rules = rules
    return game


def two_player_lobby() -> ChatGame:
    game, _ = flow.join(lobby(), T0, GID, BOB)
    return game


def test_lobby_operations() -> None:
    table = two_player_lobby()
    with pytest.raises(FlowError, match="already_joined"):
        flow.join(table, T0, GID, BOB)
    table, _ = flow.add_ai(table, T0, GID, 1, "easy", "Easy AI")
    assert [s.ai for s in table.seats] == [None, None, "easy"]
    table, _ = flow.remove_ai(table, T0, GID, 1)
    table, _ = flow.change_option(table, T0, GID, 1, "deck")
    assert table.rules.deck_size == 52
    table, _ = flow.change_option(table, T0, GID, 1, "transfer")
    assert table.rules.transfer
    with pytest.raises(FlowError, match="stale"):
        flow.join(table, T0, "zzzzzz", Person(3, "C"))
    with pytest.raises(FlowError, match="waiting_dm"):
        flow.start(table, T0, GID, 1, [BOB.user_id])
    table, _ = flow.start(table, T0, GID, 1, [])
    assert table.phase == "playing" and table.state is not None
    assert table.turn_deadline == 60.0


def test_moves_are_validated_and_stale_steps_refused() -> None:
    table, _ = flow.start(two_player_lobby(), T0, GID, 1, [])
    state = table.engine_state()
    mover = next(p for p in range(2) if legal_actions(state, p))
    other = 1 - mover
    uid = table.seats[mover].user_id
    assert uid is not None
    other_uid = table.seats[other].user_id or 0
    with pytest.raises(FlowError, match="illegal"):
        flow.play(table.model_copy(deep=True), at(1.0), GID, other_uid, 0, Take())
    first = legal_actions(state, mover)[0]
    with pytest.raises(FlowError, match="stale"):
        flow.play(table.model_copy(deep=True), at(1.0), GID, uid, 5, first)
    with pytest.raises(FlowError, match="not_in_game"):
        flow.play(table.model_copy(deep=True), at(1.0), GID, 99, 0, Take())
    after, effects = flow.play(table, at(30.0, notify_quiet=10), GID, uid, 0, first)
    assert after.engine_state().step == 1
    # The defender now must act and was idle for 30 s: their new hand notifies.
    assert effects.notify == {table.seats[other].user_id}
    assert after.turn_deadline == 90.0


def test_timeouts_move_for_the_player_and_hand_over_after_three() -> None:
    table, _ = flow.start(two_player_lobby(), T0, GID, 1, [])
    now = 0.0
    handed = []
    for _ in range(10):
        now += 61
        table, effects = flow.on_timeout(table, at(now))
        handed += [a.kwargs["name"] for a in effects.announce]
        if len(handed) == 2:
            break
    assert sorted(handed) == ["Ann <b>", "Bob"]
    assert all(s.ai == "normal" for s in table.seats)
    assert table.turn_deadline is None and table.ai_due is not None


def test_timeout_actions() -> None:
    table, _ = flow.start(two_player_lobby(), T0, GID, 1, [])
    state = table.engine_state()
    leader = next(p for p in range(2) if legal_actions(state, p))
    v = view(state, leader)
    action = flow.timeout_action(v)
    assert isinstance(action, Attack) and action.cards == (v.hand[0],)
    state = state.__class__.from_dict(table.state or {})
    from engine import apply

    after = apply(state, leader, action)
    assert flow.timeout_action(view(after, 1 - leader)) == Take()


def test_leaving_with_one_human_left_ends_the_game() -> None:
    table, _ = flow.start(two_player_lobby(), T0, GID, 1, [])
    table, effects = flow.leave_game(table, at(5.0), GID, ANN.user_id)
    assert table.phase == "finished" and table.final_durak == 0
    assert {(d.user_id, d.durak, d.first) for d in effects.stats} == {(1, 1, 0), (2, 0, 0)}


def test_rendering_escapes_names_and_offers_only_legal_moves() -> None:
    tr = translator("en")
    table, _ = flow.start(two_player_lobby(), T0, GID, 1, [])
    group = render.table_message(table, tr, "durak_bot")
    assert "Ann &lt;b&gt;" in group.text and "Ann <b>" not in group.text
    state = table.engine_state()
    for seat in range(2):
        hand = render.hand_message(table, seat, tr)
        legal = set(legal_actions(state, seat))
        assert hand.markup is not None
        for row in hand.markup.inline_keyboard:
            for button in row:
                assert button.callback_data is not None
                assert len(str(button.callback_data).encode()) <= 64
                decoded = callbacks.decode(str(button.callback_data))
                assert isinstance(decoded, HandButton)
                if decoded.op == "move":
                    assert decoded.action in legal
                else:
                    assert decoded.op in ("pick", "leave")
        # No card of the other hand appears in the group message.
        for card in view(state, seat).hand:
            assert f" {card} " not in group.text.replace("\n", " ")


def test_lobby_render_has_every_label_and_rules_options() -> None:
    tr = translator("en")
    content = render.lobby_message(two_player_lobby(), tr, "durak_bot", [BOB.user_id])
    labels = [b.text for row in content.markup.inline_keyboard for b in row]  # type: ignore[union-attr]
    for word in (
        "Join",
        "Leave",
        "+ AI Easy",
        "+ AI Normal",
        "+ AI Hard",
        "Start",
        "Cancel",
        "⚙️ Options",
    ):
        assert word in labels
    assert "Deck: 36 · Throw-in: all · Transfer: off · Series: 1" in content.text
    assert "Waiting for Bob" in content.text
    # The options screen: each option's name, then its values with the current one marked.
    options = render.lobby_message(
        two_player_lobby().model_copy(update={"lobby_screen": "options"}), tr, "durak_bot", []
    )
    rows = [[b.text for b in row] for row in options.markup.inline_keyboard]  # type: ignore[union-attr]
    assert ["Deck", "24", "✓ 36", "52"] in rows
    assert ["Throw-in", "✓ all", "neighbours"] in rows
    assert ["Transfer", "✓ off", "on"] in rows
    assert ["Series", "✓ 1", "3", "5", "10"] in rows
    assert rows[-1] == ["‹ Back"] and all("Start" not in row for row in rows)


def test_big_tables_stay_within_telegram_limits() -> None:
    table = lobby("x" * 300, Person(1, "n" * 200), Rules(deck_size=52))
    for uid in range(2, 7):
        table, _ = flow.join(table, T0, GID, Person(uid, "n" * 200))
    table, _ = flow.start(table, T0, GID, 1, [])
    tr = translator("en")
    assert len(render.table_message(table, tr, "b").text) <= 4096
    for seat in range(6):
        assert len(render.hand_message(table, seat, tr).text) <= 4096


async def test_hard_ai_thinks_in_a_process_pool() -> None:
    from bot.app.ai_runner import AiRunner, ai_seed
    from engine import new_game

    runner = AiRunner(processes=1)
    try:
        state = new_game(Rules(), 3, seed=5)
        seat = next(p for p in range(3) if legal_actions(state, p))
        action = await runner.choose("hard", ai_seed("abc123", 0, seat), view(state, seat))
        assert action in legal_actions(state, seat)
    finally:
        runner.close()


def four_seat_lobby() -> ChatGame:
    game = two_player_lobby()
    for level in ("easy", "normal"):
        game, _ = flow.add_ai(game, T0, GID, 1, level, level)  # type: ignore[arg-type]
    return game


def test_partners_only_with_four_or_six_seats() -> None:
    tr = translator("en")
    three, _ = flow.add_ai(two_player_lobby(), T0, GID, 1, "easy", "Easy")
    offered = [
        b.text
        for row in render.lobby_message(three, tr, "b", []).markup.inline_keyboard
        for b in row
    ]  # type: ignore[union-attr]
    assert not any(t.startswith("Partners") for t in offered)
    with pytest.raises(FlowError, match="partners_seats"):
        flow.change_option(three, T0, GID, 1, "partners")
    four, _ = flow.add_ai(three.model_copy(deep=True), T0, GID, 1, "easy", "Easy")
    four, _ = flow.change_option(four, T0, GID, 1, "partners")
    assert four.rules.partners
    # Someone leaves: partners stays on (so it can be switched off) but cannot start.
    five, _ = flow.add_ai(four.model_copy(deep=True), T0, GID, 1, "easy", "Easy")
    shown = render.lobby_message(five.model_copy(update={"lobby_screen": "options"}), tr, "b", [])
    rows = [[b.text for b in row] for row in shown.markup.inline_keyboard]  # type: ignore[union-attr]
    assert ["Partners", "off", "✓ on"] in rows and "Partners: on" in shown.text
    with pytest.raises(FlowError, match="partners_seats"):
        flow.start(five, T0, GID, 1, [])
    game, _ = flow.start(four, T0, GID, 1, [])
    text = render.table_message(game, tr, "b").text
    assert "team A" in text and "team B" in text


def test_every_group_operation_has_exactly_one_handler() -> None:
    from bot.telegram.group_buttons import GROUP_ROUTES

    assert set(GROUP_ROUTES) == callbacks.GROUP_OPS
    codes = {callbacks.encode_group(GID, op)[-1] for op in callbacks.GROUP_OPS}
    assert len(codes) == len(callbacks.GROUP_OPS)  # one letter per operation
    for option in LOBBY_OPTIONS:
        assert GROUP_ROUTES[option.op].who == option.who


def test_each_lobby_option_cycles_through_its_values_and_shows_them() -> None:
    tr = translator("en")
    for option in LOBBY_OPTIONS:
        game = four_seat_lobby()
        game.lobby_screen = "options"
        seen = []
        for _ in option.values:
            seen.append(option.current(game))
            index = option.values.index(option.current(game))
            labels = [
                b.text
                for row in render.lobby_message(game, tr, "b", []).markup.inline_keyboard  # type: ignore[union-attr]
                for b in row
                if b.callback_data == callbacks.encode_group(GID, option.op, index)
            ]
            assert len(labels) == 1 and labels[0].startswith("✓ ")
            assert labels[0][2:] in render.option_label(option, game, tr)
            assert render.option_label(option, game, tr) in render.rules_summary(game, tr)
            game, _ = flow.change_option(game, T0, GID, 1, option.op)
        assert sorted(map(str, seen)) == sorted(map(str, option.values))
        assert option.current(game) == seen[0]


def test_a_tap_from_an_older_keyboard_counts_while_its_move_is_still_legal() -> None:
    carol = Person(3, "Carol")
    for n in range(60):
        gid = f"st{n:04d}"
        game, _ = flow.new_lobby(None, T0, Place(CHAT), "Club", ANN, gid)
        for person in (BOB, carol):
            game, _ = flow.join(game, T0, gid, person)
        game, _ = flow.start(game, T0, gid, 1, [])
        state = game.engine_state()
        leader = state.attacker
        lead = next(a for a in legal_actions(state, leader) if isinstance(a, Attack))
        uid = {i: s.user_id or 0 for i, s in enumerate(game.seats)}
        game, _ = flow.play(game, T0, gid, uid[leader], 0, lead)
        with pytest.raises(FlowError, match="moved_on"):  # a double tap: the card is gone
            flow.play(game.model_copy(deep=True), T0, gid, uid[leader], 0, lead)
        state = game.engine_state()
        defender = state.defender
        adders = [
            (p, a)
            for p in range(3)
            if p != defender
            for a in legal_actions(state, p)
            if isinstance(a, Attack)
        ]
        if Take() not in legal_actions(state, defender) or not adders:
            continue
        seat, throw_in = adders[0]
        game, _ = flow.play(game, T0, gid, uid[seat], 1, throw_in)
        # The defender's Take from the keyboard of step 1: the table moved on, still legal.
        game, _ = flow.play(game, T0, gid, uid[defender], 1, Take())
        took = [e for e in game.engine_state().all_events() if isinstance(e, Took)]
        assert [e.player for e in took] == [defender]
        return
    raise AssertionError("no game with a throw-in before the defender moved")


def test_the_group_message_is_the_same_whoever_holds_the_hidden_cards() -> None:
    tr = translator("en")
    game = lobby()
    for person in (BOB, Person(3, "Carol")):
        game, _ = flow.join(game, T0, GID, person)
    game, _ = flow.start(game, T0, GID, 1, [])
    for _ in range(4):  # a few moves in, so the table and the events are not empty
        state = game.engine_state()
        seat = next(p for p in range(3) if legal_actions(state, p))
        uid = game.seats[seat].user_id or 0
        game, _ = flow.play(game, T0, GID, uid, state.step, legal_actions(state, seat)[0])
    data = game.state or {}
    hands = [list(h) for h in data["hands"]]
    # Swap one card between two hands (same sizes, same public history).
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    other = game.model_copy(deep=True)
    other.state = {**data, "hands": hands}
    assert render.table_message(other, tr, "b").text == render.table_message(game, tr, "b").text
    assert render.hand_message(other, 0, tr).text != render.hand_message(game, 0, tr).text


def test_hand_modes_follow_the_step_and_stay_bounded() -> None:
    from bot.domain.hand_modes import HandModes

    game, _ = flow.start(two_player_lobby(), T0, GID, 1, [])
    modes = HandModes(limit=3)
    modes.set(Place(CHAT), ANN.user_id, GID, 0, ("leave", 0))
    assert modes.current(game, ANN.user_id) == ("leave", 0)
    modes.set(Place(CHAT), ANN.user_id, GID, 7, ("leave", 0))  # another step: no longer applies
    assert modes.current(game, ANN.user_id) is None and len(modes) == 0
    for user in range(10):
        modes.set(Place(CHAT), user, GID, 0, ("pick", 5))
    assert len(modes) == 3 and modes.current(game, 9) == ("pick", 5)
    assert modes.current(game, 0) is None
