"""A table you read at a glance: the group table at six seats fits a phone, says whose
move first and that the game is over when it is, its counts are the view's, a take is
news for the attackers, the hand says what happened meanwhile, buttons say what they
do, and a tap's answer speaks to the tapper."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from support.harness import open_lobby, press, pressable
from telegram import InlineKeyboardMarkup

from bot import render
from bot.domain import flow
from bot.domain.flow import Moment, Person, Timing
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.render import faces
from bot.render.labels import label_width, too_wide
from engine import (
    Attack,
    Beat,
    Pass,
    Rules,
    State,
    Swap,
    Take,
    Transfer,
    apply,
    legal_actions,
    must_act,
    public_view,
    view,
    waiting_for,
)
from engine.core import transfer_target
from locales import SUPPORTED, translator, visible_text

TIMING = Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=20.0, throw_in_window=7.0)
CHARS_PER_LINE = 38
"""What a 390-px phone shows of the table per line: the sandbox's screenshots at that
width wrap the group message at about 40 characters (an emoji counted as two); 38
leaves room for word wrap."""
MOST_LINES = 16
"""Six seats, the worst moment of a whole game, in English (the median is 12)."""
MOST_LINES_ANY_LANGUAGE = 20
HUMANS = ("Ann", "Bob", "Alexandra K.")


def at(now: float) -> Moment:
    return Moment(now, TIMING)


def six_seats(seed: str, rules: Rules | None = None) -> ChatGame:
    """Three people and three computers, two of them of one level."""
    game, _ = flow.new_lobby(None, at(1000.0), Place(-100), "Club", Person(1, HUMANS[0]), seed)
    game.rules = rules or Rules()
    for i, name in enumerate(HUMANS[1:], start=2):
        game, _ = flow.join(game, at(1000.0), seed, Person(i, name))
    for level in ("hard", "hard", "normal"):
        game, _ = flow.add_ai(game, at(1000.0), seed, 1, level, level)
    game, _ = flow.start(game, at(1000.0), seed, 1, [])
    return game


def played(game: ChatGame, rng: random.Random) -> Iterator[State]:
    """Every state of one random game, stored into ``game`` (with its clock) as it goes."""
    state = game.engine_state()
    while not state.over:
        seat = rng.choice(waiting_for(state))
        state = apply(state, seat, rng.choice(legal_actions(state, seat)))
        game.state = state.to_dict()
        flow.schedule(game, state, at(1000.0))
        yield state


def phone_lines(text: str) -> int:
    """Lines the visible text takes at phone width."""
    return sum(
        max(1, math.ceil(label_width(line) / CHARS_PER_LINE))
        for line in visible_text(text).split("\n")
    )


def labels(markup: InlineKeyboardMarkup | None) -> list[str]:
    return [b.text for row in (markup.inline_keyboard if markup else ()) for b in row]


# --- the group table ---------------------------------------------------------------------


@pytest.mark.parametrize("lang", SUPPORTED)
def test_six_seats_fit_a_phone_screen(lang: str) -> None:
    tr = translator(lang)
    most, sizes = 0, []
    for n in range(6):
        rules = Rules(variant="perevodnoy") if n % 2 else Rules()
        game = six_seats(f"fit{n:03d}", rules)
        for _ in played(game, random.Random(n)):
            table = render.table_message(game, tr, "bot", now=1000.5)
            sizes.append(phone_lines(table.text))
            most = max(most, sizes[-1])
    sizes.sort()
    assert sizes[len(sizes) // 2] <= (14 if lang == "en" else 15), sizes[len(sizes) // 2]
    assert most <= (MOST_LINES if lang == "en" else MOST_LINES_ANY_LANGUAGE), most


def test_whose_move_comes_first_and_the_clock_claims_no_seconds_it_will_not_update() -> None:
    en = translator("en")
    game = six_seats("first1")
    text = visible_text(render.table_message(game, en, "bot", now=1000.0).text)
    lines = text.split("\n")
    assert lines[0] == "Durak ⏱ up to 1 min"  # 60 s from now, said as an upper bound
    assert lines[1].startswith("➡️ ") and "to attack" in lines[1]
    assert lines[2].startswith("Trump: ")
    # Later renders keep a true upper bound: never more than what is left.
    for now, clock in ((1015.0, "up to 50 s"), (1042.0, "up to 18 s"), (1053.0, "up to 7 s")):
        assert clock in render.table_message(game, en, "bot", now=now).text
    # The clock alone never edits the message.
    assert (
        render.table_message(game, en, "bot", now=1000.0).digest()
        == render.table_message(game, en, "bot", now=1053.0).digest()
    )


def test_the_final_table_says_the_game_is_over() -> None:
    en = translator("en")
    game = six_seats("over01")
    rng = random.Random(4)
    for _ in zip(range(30), played(game, rng), strict=False):
        pass
    assert must_act(game.engine_state()).kind != "over"  # a game ended early (left)
    game.phase = "finished"
    text = visible_text(render.table_message(game, en, "bot").text)
    assert "🏁 This game is over." in text.split("\n")[:2]
    assert "to beat or take" not in text and "to attack" not in text and "⏱" not in text
    # A game played to its end says so too.
    whole = six_seats("over02")
    for _ in played(whole, random.Random(5)):
        pass
    whole.phase = "finished"
    assert "This game is over." in render.table_message(whole, en, "bot").text


def seat_counts(text: str, names: list[str]) -> dict[str, int]:
    """The card count each seat line shows (``Name — 5 cards``)."""
    found = {}
    for line in visible_text(text).split("\n"):
        for name in names:
            match = re.fullmatch(rf"{re.escape(name)} — (\d+) cards?(?: · \w+)?", line)
            if match:
                found[name] = int(match.group(1))
    return found


def test_counts_are_the_views_hand_sizes_and_two_computers_have_two_names() -> None:
    en = translator("en")
    game = six_seats("count1")
    names = [visible_text(n) for n in render.common.seat_names(game.seats, en)]
    assert names[3:] == ["🤖 Vera · Hard", "🤖 Boris · Hard", "🤖 Nina · Normal"]
    checked = 0
    for state in played(game, random.Random(8)):
        sizes = public_view(state).hand_sizes
        shown = seat_counts(render.table_message(game, en, "bot").text, names)
        assert shown == {names[i]: sizes[i] for i in range(6) if i not in state.out}
        for seat in range(3):  # every person's hand says the same counts
            hand = visible_text(render.hand_message(game, seat, en).text)
            others = [f"{names[s]} {sizes[s]}" for s in range(6) if s != seat]
            assert f"Cards: {' · '.join(others[seat:] + others[:seat])}" in hand
        checked += 1
    assert checked > 50


def taken(seed: str) -> ChatGame:
    """A game at the moment its defender has taken, with an attacker who may still add."""
    for n in range(200):
        game = six_seats(f"{seed}{n:03d}")
        rng = random.Random(n)
        for state in played(game, rng):
            v = public_view(state)
            adders = [s for s in v.must_act.may_add if legal_actions(state, s)]
            people = [s for s in adders if game.seats[s].human]
            if v.taking and v.must_act.kind == "throw_in" and people:
                return game
    raise AssertionError("no take with a person to throw in")


def test_the_defenders_take_is_news_for_the_attackers_and_the_group() -> None:
    en = translator("en")
    game = taken("take")
    state = game.engine_state()
    defender = state.defender
    name = visible_text(render.common.seat_names(game.seats, en)[defender])
    group = visible_text(render.table_message(game, en, "bot").text)
    assert f"➡️ {name} takes · throw-ins open" in group
    assert "Attackers may throw in or pass" not in group
    for seat in must_act(state).may_add:
        if not game.seats[seat].human or not legal_actions(state, seat):
            continue
        hand = render.hand_message(game, seat, en)
        assert f"{name} takes: you may throw in more cards." in visible_text(hand.text)
        assert "Attackers may throw in" not in hand.text
        assert "Done" in labels(hand.markup) and "Pass" not in labels(hand.markup)
    if game.seats[defender].human:
        mine = visible_text(render.hand_message(game, defender, en).text)
        assert "You take; the attackers may throw in more." in mine


# --- the hand ------------------------------------------------------------------------------


def test_the_hand_says_what_happened_since_the_players_own_move() -> None:
    en = translator("en")
    seen = 0
    for n in range(10):
        game = six_seats(f"news{n:02d}")
        for state in played(game, random.Random(n)):
            for seat in range(3):
                text = visible_text(render.hand_message(game, seat, en).text)
                mine = [e for e in state.events if getattr(e, "player", None) == seat]
                if any(type(e).__name__ in ("Attacked", "Beaten", "Took") for e in mine):
                    assert "Meanwhile:" not in text  # nothing since their own move
                if (
                    state.events
                    and not mine
                    and any(type(e).__name__ == "Discarded" for e in state.events)
                ):
                    count = len(next(e for e in state.events if hasattr(e, "cards")).cards)
                    assert "Meanwhile:" in text
                    assert "to the discard pile" in text or str(count) in text
                    seen += 1
    assert seen > 5


def test_defence_buttons_say_what_they_do() -> None:
    en = translator("en")
    kinds: set[str] = set()
    for n in range(60):
        # 52 cards leave a stock at six seats, so the trump swap comes up too.
        game = six_seats(f"btn{n:03d}", Rules(variant="perevodnoy", deck_size=52))
        for state in played(game, random.Random(n)):
            for seat in range(3):
                legal = legal_actions(state, seat)
                rendered = render.hand_message(game, seat, en)
                shown = labels(rendered.markup)
                assert too_wide(rendered.markup.inline_keyboard if rendered.markup else []) == []
                beats: dict[object, int] = {}
                for a in legal:
                    if isinstance(a, Beat):
                        beats[a.card] = beats.get(a.card, 0) + 1
                for card, targets in beats.items():
                    if targets > 1:
                        kinds.add("pick")
                        assert f"Beat with {faces.card(en, card)} …" in shown  # type: ignore[arg-type]
                for a in legal:
                    if isinstance(a, Transfer):
                        kinds.add("transfer")
                        target = transfer_target(state)
                        assert target is not None
                        who = visible_text(render.common.button_names(game.seats, en)[target])
                        assert f"Transfer {faces.card(en, a.card)} → {who}" in shown
                    if isinstance(a, Swap):
                        kinds.add("swap")
                        swap = f"Swap {faces.card(en, a.card)} ↔ {faces.card(en, state.trump_card)}"
                        assert swap in shown
                    if isinstance(a, Attack) and len(a.cards) > 1:
                        kinds.add("multi")
                        assert any(label.startswith("Attack ") for label in shown)
                if Pass() in legal:
                    if must_act(state).kind == "defend":
                        kinds.add("no pass")
                        assert "Pass" not in shown and "Done" not in shown
                    else:
                        kinds.add("done")
                        assert "Done" in shown and "Pass" not in shown
                if Take() in legal:
                    assert "Take" in shown
        if len(kinds) == 6:
            break
    assert kinds == {"pick", "transfer", "swap", "multi", "no pass", "done"}, kinds


# --- toasts ----------------------------------------------------------------------------------


def test_a_taps_answer_names_the_own_move_in_the_second_person() -> None:
    game = six_seats("toast1")
    state = game.engine_state()
    leader = state.attacker
    attack = next(a for a in legal_actions(state, leader) if isinstance(a, Attack))
    state = apply(state, leader, attack)
    game.state = state.to_dict()
    for lang, expected in (("en", "✓ You attack with "), ("ru", "✓ Вы ходите "), ("de", "✓ Du ")):
        tr = translator(lang)
        said = render.own_move_toast(game, leader, tr)
        assert said.startswith(expected) and faces.cards(tr, attack.cards) in said, said
    assert render.own_move_toast(game, state.defender, translator("en")) == ""
    # Someone else reading the same change: "Too late: Bob attacks …"; the mover: "already".
    en = translator("en")
    key, change = render.moved_on_toast(game, en, leader)
    assert key == "toast.moved_on_own" and change.startswith("you attack with ")
    text = en.t(key, change=change)
    assert text.startswith("Too late: already done — you attack with ")
    key, change = render.moved_on_toast(game, en, state.defender)
    leader_name = visible_text(render.common.seat_names(game.seats, en)[leader])
    assert key == "toast.moved_on" and change.startswith(f"{leader_name} attacks with ")
    defender_state = apply(state, state.defender, Take())
    game.state = defender_state.to_dict()
    assert render.own_move_toast(game, state.defender, en) == "✓ You take"


def test_a_move_the_game_went_on_from_at_once_is_the_movers_own_change() -> None:
    """A take picked up at once (nobody can throw in), a last beat discarded at once: the
    mover's stale tap says "already done — you take" / "— you beat …", not "Too late:
    you pick up …" or "already done — 2 cards go to the discard pile"."""
    en = translator("en")
    seen: set[str] = set()
    for n in range(300):
        game = six_seats(f"onward{n:03d}")
        for state in played(game, random.Random(n)):
            kinds = {type(e).__name__ for e in state.events}
            for move, after, said in (
                ("Took", "PickedUp", "you take"),
                ("Beaten", "Discarded", "you beat "),
            ):
                if move in kinds and after in kinds:
                    mover = next(e.player for e in state.events if type(e).__name__ == move)  # type: ignore[attr-defined]
                    key, change = render.moved_on_toast(game, en, mover)
                    assert key == "toast.moved_on_own" and change.startswith(said), change
                    seen.add(move)
        if seen == {"Took", "Beaten"}:
            return
    raise AssertionError(f"only {seen} seen")


def test_own_pass_is_told_to_the_passer_only() -> None:
    en = translator("en")
    for n in range(60):
        game = six_seats(f"pass{n:03d}")
        for state in played(game, random.Random(n)):
            passes = [e for e in state.events if type(e).__name__ == "Passed"]
            if not passes:
                continue
            passer = passes[0].player  # type: ignore[union-attr]
            assert render.own_move_toast(game, passer, en) == "✓ You pass"
            _, change = render.moved_on_toast(game, en, (passer + 1) % 6)
            assert "pass" not in change
            view(state, passer)  # the passer's own view holds it
            return
    raise AssertionError("no pass seen")


# --- through the emulator --------------------------------------------------------------------

GROUP = -100777
ANN, BOB = 71, 72


@pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")
async def test_a_taps_answer_through_the_emulator(make_harness: Any) -> None:
    async with make_harness() as h:
        h.emu.add_user(ANN, "Ann")
        h.emu.add_user(BOB, "Боря", language_code="ru")
        h.emu.add_group(GROUP, "Club", members=[ANN, BOB], admins=[], creator=ANN)
        await h.start_bot()
        for uid in (ANN, BOB):
            await h.emu.user_starts_bot(uid)
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await h.wait_text(GROUP, "2. Боря")
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        await h.settle()
        table = await h.table(GROUP)
        step = table.state["step"]  # type: ignore[index]
        state = table.engine_state()
        leader = ANN if table.seats[state.attacker].user_id == ANN else BOB
        attack = next(b for b in pressable(h, leader, step) if b[2].split(":")[4][0] == "a")
        _, mid, data = attack
        answer = await press(h, leader, leader, mid, data=data)
        if leader == ANN:
            assert answer.text.startswith("✓ You attack with "), answer.text
        else:
            assert answer.text.startswith("✓ Вы ходите "), answer.text
        await h.settle()
        stale = await h.emu.user_sends_callback(leader, leader, mid, data)  # the same, later
        again = await stale.answer()
        own = "Too late: already done — you attack with " if leader == ANN else "Поздно: уже"
        assert again.text.startswith(own), again.text
        # The defender's answer to their own take names it, in their own language.
        defender = BOB if leader == ANN else ANN
        step += 1

        def take_button() -> tuple[int, int, str] | None:
            found = [b for b in pressable(h, defender, step) if b[2].split(":")[4][0] == "t"]
            return found[0] if found else None

        _, mid, data = await h.emu.wait_for(take_button)
        answer = await press(h, defender, defender, mid, data=data)
        assert answer.text == ("✓ You take" if defender == ANN else "✓ Вы берёте"), answer.text


def test_computers_have_their_own_names_the_same_in_every_language() -> None:
    """Two computers of one level are told apart by name in the log, the table and the
    results, and a computer's name is the same whatever the group's language."""
    game = six_seats("names1")
    by_lang = {
        lang: [visible_text(n) for n in render.common.seat_names(game.seats, translator(lang))]
        for lang in SUPPORTED
    }
    for lang, names in by_lang.items():
        assert len(set(names)) == 6, (lang, names)
        own = [name.split(" · ")[0] for name in names[3:]]
        assert own == ["🤖 Vera", "🤖 Boris", "🤖 Nina"], (lang, names)
    assert by_lang["en"][3:] == ["🤖 Vera · Hard", "🤖 Boris · Hard", "🤖 Nina · Normal"]
    assert by_lang["ru"][5] == "🤖 Nina · Средний"
    en = translator("en")
    result = visible_text(render.results_message(game, en).text)
    log = visible_text(render.table_message(game, en, "bot").text)
    for name in by_lang["en"][3:]:
        assert name in log or name in result
