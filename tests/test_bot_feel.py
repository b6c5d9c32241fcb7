"""Issue 11, the table's feel, on the pure parts: card faces, labels that fit a phone,
a hand you can play from, a group log that loses no move, the throw-in window, the end."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot import render
from bot.domain import callbacks, flow
from bot.domain.flow import Moment, Person, Timing
from bot.domain.lobby_options import LOBBY_OPTIONS
from bot.domain.place import Place
from bot.domain.records import ChatGame, StatLine
from bot.render import faces
from bot.render.labels import label_width, pack, too_wide
from bot.webapp.state import game_state
from engine import Beat, Card, Pass, Rules, State, apply, legal_actions, must_act, waiting_for
from engine.events import PickedUp, Transferred
from locales import SUPPORTED, language_name, translator

CHAT = -100777
GID = "fe11ab"
NAMES = ("Ann", "Bea", "Carl", "Dora")
TIMING = Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=20.0, throw_in_window=7.0)


def at(now: float) -> Moment:
    return Moment(now, TIMING)


def rows_of(markup: InlineKeyboardMarkup | None) -> list[list[InlineKeyboardButton]]:
    return [list(r) for r in markup.inline_keyboard] if markup is not None else []


def started(players: int = 3, rules: Rules | None = None, seed: str = GID) -> ChatGame:
    game, _ = flow.new_lobby(None, at(1000.0), Place(CHAT), "Club", Person(1, NAMES[0]), seed)
    game.rules = rules or Rules()
    for i in range(1, players):
        game, _ = flow.join(game, at(1000.0), seed, Person(i + 1, NAMES[i]))
    game, _ = flow.start(game, at(1000.0), seed, 1, [])
    return game


def random_states(game: ChatGame, rng: random.Random) -> Iterator[State]:
    """Every state of one random game, moved into ``game`` as it goes."""
    state = game.engine_state()
    while not state.over:
        yield state
        seat = rng.choice(waiting_for(state))
        state = apply(state, seat, rng.choice(legal_actions(state, seat)))
        game.state = state.to_dict()
    yield state


# --- card faces ------------------------------------------------------------------------------


def test_red_suits_are_emoji_and_black_suits_text() -> None:
    en = translator("en")
    assert faces.card(en, Card.parse("9♥")) == "9♥\ufe0f"
    assert faces.card(en, Card.parse("Q♦")) == "Q♦\ufe0f"
    assert faces.card(en, Card.parse("10♠")) == "10♠"
    assert faces.card(translator("de"), Card.parse("Q♣")) == "D♣"


def test_hand_grouped_by_suit_trumps_last_ascending() -> None:
    hand = [
        Card.parse(c) for c in ["A♥", "6♠", "7♦", "10♣", "7♠", "Q♦", "8♥", "7♥", "A♦", "8♠", "7♣"]
    ]
    trump = Card.parse("7♥").suit
    groups = faces.suit_groups(hand, trump)
    assert [[str(c) for c in g] for g in groups] == [
        ["6♠", "7♠", "8♠"],
        ["7♣", "10♣"],
        ["7♦", "Q♦", "A♦"],
        ["7♥", "8♥", "A♥"],
    ]
    assert faces.grouped(translator("en"), hand[:3], trump) == "6♠ · 7♦\ufe0f · A♥\ufe0f"


def test_hand_keyboard_has_one_row_per_suit() -> None:
    game = started(2)
    state = game.engine_state()
    leader = state.attacker
    rendered = render.hand_message(game, leader, translator("en"))
    single = [
        [Card(callbacks.ALPHABET.index(str(b.callback_data)[-1])) for b in r]
        for r in rows_of(rendered.markup)
        if all(str(b.callback_data).split(":")[4][0] == "a" for b in r)
        and all(len(str(b.callback_data).split(":")[4]) == 2 for b in r)
    ]
    # The leader may lead any card: one row per suit held, trumps last, ascending.
    assert single == faces.suit_groups(state.hand(leader), state.trump)
    assert len(single) == len({c.suit for c in state.hand(leader)})


# --- labels ------------------------------------------------------------------------------------


def test_label_width_and_packing() -> None:
    assert label_width("Pass") == 4
    assert label_width("🤖 Easy") == 7
    assert label_width("9♥\ufe0f → 8♥\ufe0f") == 9
    wide = [InlineKeyboardButton("x" * 12, callback_data="x") for _ in range(3)]
    assert too_wide([wide]) == [("x" * 12, 11)] * 3
    assert [len(r) for r in pack(wide)] == [2, 1]
    assert too_wide(pack(wide)) == []


def every_keyboard(lang: str) -> Iterator[tuple[str, list[list[InlineKeyboardButton]]]]:
    tr = translator(lang)
    lobby, _ = flow.new_lobby(None, at(0.0), Place(CHAT), "Club", Person(1, "Ann"), GID)
    yield "lobby", rows_of(render.lobby_message(lobby, tr, "bot", ["Bea"]).markup)
    lobby, _ = flow.add_ai(lobby, at(0.0), GID, 1, "normal", "AI")
    lobby, _ = flow.add_ai(lobby, at(0.0), GID, 1, "hard", "AI")
    lobby, _ = flow.add_ai(lobby, at(0.0), GID, 1, "easy", "AI")
    for option in LOBBY_OPTIONS:
        for _ in range(len(option.values)):
            with contextlib.suppress(flow.FlowError):
                lobby, _ = flow.change_option(lobby, at(0.0), GID, 1, option.op)
            yield "lobby", rows_of(render.lobby_message(lobby, tr, "bot", []).markup)
    names = [language_name(code) for code in SUPPORTED]
    yield "language", rows_of(render.language_picker(tr, SUPPORTED, names).markup)
    rng = random.Random(lang)
    for rules in (Rules(), Rules(variant="perevodnoy", deck_size=52)):
        game = started(4, rules)
        for i, state in enumerate(random_states(game, rng)):
            if state.over:
                break
            if i % 3:
                continue  # a third of the states covers every kind of keyboard, faster
            for seat in range(4):
                yield "hand", rows_of(render.hand_message(game, seat, tr, now=1010.0).markup)
                yield (
                    "leave",
                    rows_of(render.hand_message(game, seat, tr, confirm_leave=True).markup),
                )
                for a in legal_actions(state, seat):
                    if isinstance(a, Beat):
                        pick = render.hand_message(game, seat, tr, pick=a.card)
                        yield "pick", rows_of(pick.markup)
        game.seats[0].ai = "normal"
        yield "computer", rows_of(render.hand_message(game, 0, tr).markup)
        flow.finish(game, state, flow.Effects(), early=False, now=1600.0)
        yield "result", rows_of(render.results_message(game, tr).markup)
        yield "rules", rows_of(render.rules_message(game, TIMING, tr).markup)


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_keyboard_fits_a_phone_in_every_language(lang: str) -> None:
    seen: set[str] = set()
    for kind, rows in every_keyboard(lang):
        assert too_wide(rows) == [], (kind, [[b.text for b in r] for r in rows])
        seen.add(kind)
    assert seen == {"lobby", "language", "hand", "leave", "pick", "computer", "result", "rules"}


def test_english_lobby_labels_keep_the_words_outside_checks_press() -> None:
    game, _ = flow.new_lobby(None, at(0.0), Place(CHAT), "Club", Person(1, "Ann"), GID)
    labels = [
        b.text
        for r in rows_of(render.lobby_message(game, translator("en"), "b", []).markup)
        for b in r
    ]
    for word in ("Join", "Leave", "Start", "Cancel"):
        assert any(word in label for label in labels)
    for level in ("Easy", "Normal", "Hard"):
        assert any("AI" in label and level in label for label in labels)


# --- a hand you can play from ------------------------------------------------------------------


def test_the_hand_shows_table_turn_counts_and_time_left() -> None:
    game = started(3)
    state = game.engine_state()
    attacker, defender = state.attacker, state.defender
    game.state = (state := apply(state, attacker, legal_actions(state, attacker)[0])).to_dict()
    flow.schedule(game, state, at(1000.0))
    en = translator("en")
    other = next(s for s in range(3) if s not in (attacker, defender))
    text = render.hand_message(game, other, en, now=1012.4).text
    assert "On the table:" in text
    assert f"{NAMES[defender]} to beat or take ⏱ up to 50 s" in text
    assert "Not your move" not in text
    for seat in range(3):
        if seat != other:
            assert f"{NAMES[seat]} {len(state.hand(seat))}" in text
    mine = render.hand_message(game, defender, en, now=1012.4)
    assert "Your move:" in mine.text and "⏱ up to 50 s" in mine.text
    # The clock alone never causes an edit.
    later = render.hand_message(game, defender, en, now=1030.0)
    assert later.text != mine.text and later.digest() == mine.digest()


def test_no_leave_button_without_cards() -> None:
    game = started(3)
    state = game.engine_state()
    empty = state._replace(hands=(0, *state.hands[1:]))
    game.state = empty.to_dict()
    labels = [
        b.text for r in rows_of(render.hand_message(game, 0, translator("en")).markup) for b in r
    ]
    assert "Leave game" not in labels
    game.state = state.to_dict()
    labels = [
        b.text for r in rows_of(render.hand_message(game, 0, translator("en")).markup) for b in r
    ]
    assert "Leave game" in labels


# --- the group log -----------------------------------------------------------------------------


def test_group_log_names_transfers_and_picked_up_cards_and_keeps_the_previous_bout() -> None:
    rng = random.Random(7)
    seen_transfer = seen_pickup = False
    for n in range(40):
        game = started(3, Rules(variant="perevodnoy"), seed=f"lg{n:04d}")
        prev: State | None = None
        for state in random_states(game, rng):
            if prev is not None and not state.over:
                text = render.table_message(game, translator("en"), "bot").text
                for event in state.events:
                    if isinstance(event, Transferred):
                        seen_transfer = True
                        assert f"transfers {faces.card(translator('en'), event.card)} →" in text
                    if isinstance(event, PickedUp):
                        seen_pickup = True
                        named = faces.cards(translator("en"), event.cards)
                        assert f"{NAMES[event.player]} picks up {named}" in text
                        assert "Previous bout:" in text
            prev = state
        if seen_transfer and seen_pickup:
            break
    assert seen_transfer and seen_pickup


def test_a_pass_shows_in_no_message_but_the_passers_own() -> None:
    # Only a player holding a card of a table rank can pass: a "Bea passes" would say so.
    rng = random.Random(5)
    en = translator("en")
    checked = 0
    for n in range(12):
        game = started(4, seed=f"ps{n:04d}")
        state = game.engine_state()
        while not state.over:
            seat = rng.choice(waiting_for(state))
            action = rng.choice(legal_actions(state, seat))
            group = render.table_message(game, en, "bot")
            others = [q for q in range(4) if q != seat]
            hands = {q: render.hand_message(game, q, en).text for q in others}
            apps = {q: game_state(game, q, en) for q in others}
            state = apply(state, seat, action)
            game.state = state.to_dict()
            if action == Pass() and not state.over and must_act(state).kind != "lead":
                checked += 1  # the bout goes on
                assert render.table_message(game, en, "bot") == group
                for q in others:
                    assert render.hand_message(game, q, en).text == hands[q]
                    assert {**game_state(game, q, en), "step": apps[q]["step"]} == apps[q]
                # The passer's own Mini App waits on the others, not on them.
                mine = game_state(game, seat, en)
                assert seat not in [w["seat"] for w in mine["waiting"]]
                assert NAMES[seat] not in mine["prompt"]
    assert checked >= 10


def test_a_hand_whose_moves_stay_the_same_is_not_edited() -> None:
    """A hand's digest (what decides an edit) stays the same while its own lines and
    moves do, whatever the step: a thrower's hand is not re-sent for each card the
    defender beats, nor for another player's hidden pass."""
    en = translator("en")
    rng = random.Random(8)
    kept = changed = 0
    for n in range(8):
        game = started(4, seed=f"ks{n:04d}")
        state = game.engine_state()
        while not state.over:
            seat = rng.choice(waiting_for(state))
            others = [q for q in range(4) if q != seat]
            before = {q: render.hand_message(game, q, en) for q in others}
            legal = {q: legal_actions(state, q) for q in others}
            state = apply(state, seat, rng.choice(legal_actions(state, seat)))
            game.state = state.to_dict()
            for q in others:
                after = render.hand_message(game, q, en)
                steps = {
                    callbacks.decode(str(b.callback_data)).step  # type: ignore[union-attr]
                    for row in rows_of(after.markup)
                    for b in row
                    if str(b.callback_data).split(":")[4] != "m"  # "take back": no step
                }
                assert steps <= {state.step}  # freshly made buttons carry this step
                same_moves = set(legal_actions(state, q)) == set(legal[q])
                if same_moves and legal[q] and after.stable == before[q].stable:
                    assert after.digest() == before[q].digest()
                    kept += 1
                    changed += after.text != before[q].text  # the context rides along later
    assert kept > 100 and changed > 50


def test_automatic_moves_are_marked_in_the_log() -> None:
    game = started(2)
    state = game.engine_state()
    game, _ = flow.on_timeout(game, at(2000.0))
    assert game.auto_steps == [state.step + 1]
    assert (
        "⏱ " + NAMES[state.attacker] + " attacks"
        in render.table_message(game, translator("en"), "bot").text
    )


# --- pace --------------------------------------------------------------------------------------


def test_throw_in_window_replaces_the_turn_timeout_once_the_defender_is_done() -> None:
    rng = random.Random(3)
    checked = 0
    for n in range(20):
        game = started(3, seed=f"tw{n:04d}")
        for state in random_states(game, rng):
            if state.over:
                break
            game.last_seen_step = -1
            flow.schedule(game, state, at(5000.0))
            if not waiting_for(state):  # every seat is human here
                assert game.turn_deadline is None
            elif must_act(state).kind == "throw_in":
                assert game.turn_deadline == 5007.0
                checked += 1
            else:
                assert game.turn_deadline == 5060.0
    assert checked > 10


# --- the end -----------------------------------------------------------------------------------


def test_the_ending_names_the_durak_bouts_duration_and_offers_rematch_and_new_lobby() -> None:
    game = started(3)
    state = list(random_states(game, random.Random(5)))[-1]
    assert state.over
    effects = flow.Effects()
    flow.finish(game, state, effects, early=False, now=1000.0 + 7 * 60)
    en = translator("en")
    result = render.results_message(game, en)
    assert "Game over" in result.text
    assert f"{state.bout} bouts · 7 min" in result.text
    labels = [b.text for r in rows_of(result.markup) for b in r]
    assert labels == ["Rematch", "New lobby"]
    final = render.table_message(game, en, "bot")
    assert "final table" in final.text and "Game over" not in final.text
    for seat in range(3):
        line = render.hand_closed(game, en, seat).text
        assert "\n" not in line and "Club" in line
        if seat == game.final_durak:
            assert "you are the durak" in line
        elif game.final_durak is not None:
            assert f"place {game.final_order.index(seat) + 1} of 3" in line
    fresh, _ = flow.fresh_lobby(game, at(2000.0), GID, Person(9, "Zoe"), "zz0000")
    assert fresh.phase == "lobby" and [s.name for s in fresh.seats] == ["Zoe"]
    assert fresh.rules == game.rules


# --- lobby and /stats --------------------------------------------------------------------------


def test_seats_are_shown_against_the_decks_real_maximum() -> None:
    lobby, _ = flow.new_lobby(None, at(0.0), Place(CHAT), "Club", Person(1, "Ann"), GID)
    lobby.rules = Rules(deck_size=24)
    assert "Players (1/4)" in render.lobby_message(lobby, translator("en"), "b", []).text
    lobby.rules = Rules(deck_size=36)
    assert "Players (1/6)" in render.lobby_message(lobby, translator("en"), "b", []).text


def test_stats_are_a_table_ranked_by_durak_rate() -> None:
    lines = [
        StatLine(user_id=1, name="Ann", played=6, durak=1, first=4),
        StatLine(user_id=2, name="Bea", played=4, durak=2, first=0),
        StatLine(user_id=3, name="Carl", played=1, durak=0, first=1),
    ]
    text = render.group_stats(lines, translator("en")).text
    assert text.splitlines()[1:] == [
        "1. Carl — 1 game · durak 0 (0%) · first out 1",
        "2. Ann — 6 games · durak 1 (17%) · first out 4",
        "3. Bea — 4 games · durak 2 (50%) · first out 0",
    ]
