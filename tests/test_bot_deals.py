"""Deals anyone can verify, in the bot: the code at Start, the reveal in the result, the
salt kept secret until then, replays from the stored deck, and games dealt before."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
from typing import Any

import pytest
from support.harness import (
    DEAL_CODE,
    Harness,
    check_deal,
    deal_note,
    open_lobby,
    play_out,
    press,
    set_options,
)

from ai.review import actions_from_events
from bot import render
from bot.app import deals
from bot.domain import flow
from bot.domain.deal import Deal
from bot.domain.flow import FlowError, Moment, Person, Timing
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.ops.verify import main as verify_main
from bot.store.storage import Write
from bot.webapp.state import game_state
from engine import State, apply, new_game, view
from engine.commitment import commit, parse_reveals, short
from locales import translator

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100700
ANN, BOB = 21, 22
EN = translator("en")


def scene(h: Harness, *users: int) -> None:
    for uid in users:
        h.emu.add_user(uid, {ANN: "Ann", BOB: "Bob"}[uid])
    h.emu.add_group(GROUP, "Fair Play", members=list(users), admins=[], creator=users[0])


async def seated(h: Harness, humans: list[int], ais: list[str]) -> Any:
    for uid in humans:
        await h.emu.user_starts_bot(uid)
        await h.wait_text(uid, "Hi!")
    lobby = await open_lobby(h, GROUP, humans[0])
    for uid in humans[1:]:
        await press(h, uid, GROUP, lobby.message_id, text="Join")
    for level in ais:
        await press(h, humans[0], GROUP, lobby.message_id, text=f"+ AI {level}")
    await h.wait_text(GROUP, f"{len(humans) + len(ais)}. ")
    return lobby


# --- what a running game shows: never the salt ---------------------------------------------


def salt_seen_in(game: ChatGame, salt: str) -> list[str]:
    """Every render of the running game, view and Mini App state that holds ``salt``."""
    state = game.engine_state()
    shown = {
        "table": render.table_message(game, EN, "bot").text,
        "engine state": json.dumps(game.state),
        "record repr": repr(game),
    }
    for seat in range(len(game.seats)):
        hand = render.hand_message(game, seat, EN)
        shown[f"hand {seat}"] = hand.text + repr(hand.markup.to_dict() if hand.markup else None)
        shown[f"view {seat}"] = repr(view(state, seat))
        shown[f"mini app {seat}"] = json.dumps(game_state(game, seat, EN))
    return [where for where, text in shown.items() if salt in text]


async def watch_running_game(h: Harness, salt: str) -> int:
    """Check every step of the running game as it happens; the number of steps seen."""
    steps: set[int] = set()
    with h.emu.subscribe([GROUP]) as changes:
        while True:
            game = await h.table(GROUP)
            if game.phase != "playing" or game.deal is None:
                return len(steps)
            assert salt_seen_in(game, salt) == [], game.engine_state().step
            steps.add(game.engine_state().step)
            await changes.get(timeout=10)


def emulator_texts(h: Harness, chat_id: int, but: int | None = None) -> list[str]:
    return [
        m.html + json.dumps(m.reply_markup)
        for m in h.emu.messages(chat_id, include_deleted=True)
        if m.message_id != but
    ]


# --- one game, from the code to the reveal -------------------------------------------------


async def test_the_code_comes_at_start_and_the_result_reveals_the_deal(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN)
        await h.start_bot()
        lobby = await seated(h, [ANN], ["Easy", "Normal"])
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        note = await h.wait_text(GROUP, "Deal code:")
        game = await h.table(GROUP)
        assert game.deal is not None and game.deal.size == game.rules.deck_size
        salt = game.deal.salt
        # A new message (the table is the lobby, edited), showing the deal's commitment.
        assert note.message_id != lobby.message_id
        code = short(commit(bytes.fromhex(salt), game.deal.cards))
        assert DEAL_CODE.findall(note.text) == [" ".join(code[i : i + 4] for i in range(0, 32, 4))]
        assert "the result reveals it" in note.text
        # The game dealt exactly the stored deck (its first events are that deal's, however
        # far a computer seat has played by now).
        first = game.engine_state()
        redealt = new_game(game.rules, 3, deck=game.deal.cards, dealer=first.dealer)
        dealt = redealt.all_events()
        assert first.all_events()[: len(dealt)] == dealt

        watcher = asyncio.create_task(watch_running_game(h, salt))
        result = await play_out(h, GROUP, [ANN])
        assert await asyncio.wait_for(watcher, 10) >= 3
        # Until the result, no message in the group or in private held the salt.
        for chat in (GROUP, ANN):
            assert not [t for t in emulator_texts(h, chat, but=result.message_id) if salt in t]
        assert deal_note(h.emu, GROUP, result.message_id).message_id == note.message_id
        assert h.emu.message(GROUP, note.message_id).edit_count == 0

        # The result: the reveal inside <code> (a tap copies it) and where to check it.
        token = game.deal.reveal(3)
        assert f"<code>{token}</code>" in result.html
        assert "Check: durak-verify or docs/verify.md" in result.text
        assert check_deal(h.emu, GROUP, result) == DEAL_CODE.findall(note.text)[0]
        finished = await h.table(GROUP)
        assert finished.phase == "finished" and finished.deal == game.deal
        # Not in the Mini App's result: the reveal is the group message's.
        assert salt not in json.dumps(game_state(finished, 0, EN))
        assert_replays(finished)
        assert_tampering_fails(result.text)


def assert_replays(game: ChatGame) -> None:
    """The stored deck and dealer deal the game again; its actions replay to the end."""
    assert game.deal is not None
    final = game.engine_state()
    replay = new_game(game.rules, len(game.seats), deck=game.deal.cards, dealer=final.dealer)
    for seat, action in actions_from_events(final.all_events()):
        replay = apply(replay, seat, action)
    assert replay.all_events() == final.all_events()
    assert replay.to_dict() == final.to_dict()


def assert_tampering_fails(message: str) -> None:
    """A result with two cards of the deck swapped is refused."""
    (reveal,) = parse_reveals(message)
    deck = reveal.deck_text
    swapped = deck[2:4] + deck[:2] + deck[4:]
    tampered = message.replace(deck, swapped)
    assert tampered != message
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert verify_main(["--text", tampered]) == 1
    assert "MISMATCH: commitment mismatch" in out.getvalue()


# --- a series: each game its code and its reveal -------------------------------------------


async def test_each_game_of_a_series_has_its_own_code_and_reveal(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN, BOB)
        await h.start_bot()
        lobby = await seated(h, [ANN, BOB], [])
        await set_options(h, ANN, GROUP, lobby.message_id, series=3)
        await h.wait_text(GROUP, "Series: 3")
        codes, salts = [], []
        for number in (1, 2):
            await press(h, ANN, GROUP, lobby.message_id, text="Start")
            note = await h.wait_text(GROUP, f"Game {number} of 3, deal code:")
            game = await h.table(GROUP)
            assert game.deal is not None
            salts.append(game.deal.salt)
            result = await play_out(h, GROUP, [ANN, BOB])
            codes.append(check_deal(h.emu, GROUP, result))
            assert codes[-1] in note.text
            assert len(parse_reveals(result.text)) == 1  # this game's only
            if number == 1:
                await press(h, ANN, GROUP, result.message_id, text="Next game")
                lobby = await h.wait_text(GROUP, "Series: game 2 of 3")
                assert (await h.table(GROUP)).deal is None  # a lobby has no deal yet
        assert len(set(codes)) == 2 and len(set(salts)) == 2


# --- a game dealt before verifiable deals ---------------------------------------------------


async def test_a_game_stored_without_a_deal_plays_on_and_finishes(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h, ANN)
        await h.start_bot()
        lobby = await seated(h, [ANN], ["Easy"])
        await press(h, ANN, GROUP, lobby.message_id, text="Start")
        await h.wait_text(GROUP, "Deal code:")

        def legacy(game: ChatGame | None) -> Write[None]:
            assert game is not None
            return Write(game.model_copy(update={"deal": None}), None)

        # The record as code from before verifiable deals wrote it: no "deal" at all.
        await h.games.storage.update_table(Place(GROUP), legacy)
        stored = await h.table(GROUP)
        assert stored.deal is None and "deal" not in json.loads(stored.to_json())
        result = await play_out(h, GROUP, [ANN], verify_deal=False)
        assert (await h.table(GROUP)).phase == "finished"
        assert parse_reveals(result.text) == [] and "durak-verify" not in result.text
        assert EN.t("result.rematch") in [b["text"] for row in result.buttons for b in row]


# --- the pure parts: the record, the flow ---------------------------------------------------

MOMENT = Moment(1000.0, Timing(turn_timeout=60, ai_delay=0, notify_quiet=20))


def lobby_of(players: int, deck_size: int = 36) -> ChatGame:
    game, _ = flow.new_lobby(None, MOMENT, Place(GROUP), "Fair Play", Person(ANN, "Ann"), "fair01")
    game.rules = game.rules.model_copy(update={"deck_size": deck_size})
    for level in ("easy", "normal", "hard")[: players - 1]:
        game, _ = flow.add_ai(game, MOMENT, "fair01", ANN, level, level)
    return game


def test_start_deals_the_given_deck_and_announces_its_code() -> None:
    deal = deals.deal_for(lobby_of(3))
    assert deal is not None
    game, effects = flow.start(lobby_of(3), MOMENT, "fair01", ANN, set(), deal)
    assert game.deal == deal
    dealt: State = game.engine_state()
    again = new_game(game.rules, 3, deck=deal.cards, dealer=dealt.dealer)
    assert dealt.hands == again.hands and dealt.trump_card == again.trump_card
    (note,) = effects.announce
    assert note.key == "deal.code" and note.kwargs == {"code": deal.code}
    assert deal.salt not in json.dumps(note.kwargs)


def test_a_deal_for_another_deck_is_refused_before_anything_changes() -> None:
    lobby = lobby_of(2, deck_size=36)
    deal = deals.deal_for(lobby_of(2, deck_size=52))
    with pytest.raises(FlowError) as refused:
        flow.start(lobby, MOMENT, "fair01", ANN, set(), deal)
    assert refused.value.key == "toast.stale"
    assert lobby.phase == "lobby" and lobby.deal is None and lobby.state is None


def test_without_a_deal_the_game_is_dealt_from_its_seed_and_shows_no_code() -> None:
    game, effects = flow.start(lobby_of(2), MOMENT, "fair01", ANN, set())
    assert game.deal is None and effects.announce == []
    assert game.series is not None
    seeded = new_game(game.rules, 2, seed=flow.game_seed("fair01", 0), dealer=game.series.dealer)
    assert game.engine_state().hands == seeded.hands


def test_the_record_keeps_the_deal_and_leaves_out_none() -> None:
    deal = deals.deal_for(lobby_of(2))
    assert deal is not None
    game, _ = flow.start(lobby_of(2), MOMENT, "fair01", ANN, set(), deal)
    loaded = ChatGame.model_validate_json(game.to_json())
    assert loaded.deal == deal and loaded.deal.cards == deal.cards
    assert deal.salt not in repr(game) and deal.salt not in str(deal)  # a log line hides it
    lobby = lobby_of(2)
    assert "deal" not in json.loads(lobby.to_json())
    assert ChatGame.model_validate_json(lobby.to_json()).deal is None


@pytest.mark.parametrize(
    ("salt", "deck"),
    [
        ("ab" * 8, None),  # 8 bytes: too short
        ("AB" * 16, None),  # not lowercase
        ("zz" * 16, None),
        (None, "Ts" * 36),  # the same card 36 times
        (None, "Ts7s"),  # not a whole deck
    ],
)
def test_a_damaged_deal_does_not_load(salt: str | None, deck: str | None) -> None:
    good = deals.deal_for(lobby_of(2))
    assert good is not None
    with pytest.raises(ValueError):
        Deal(salt=salt or good.salt, deck=deck or good.deck)


def test_the_next_lobby_of_a_series_forgets_the_deal() -> None:
    lobby = lobby_of(2)
    lobby.rules = lobby.rules.model_copy(update={"series_length": 3})
    game, _ = flow.start(lobby, MOMENT, "fair01", ANN, set(), deals.deal_for(lobby))
    game.phase, game.finished_at = "finished", time.time()
    nxt, _ = flow.next_game(game, MOMENT, "fair01", "fair02")
    assert nxt.deal is None and nxt.phase == "lobby"
    assert game.deal is not None  # the finished game's own record keeps it
