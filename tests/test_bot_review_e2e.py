"""The Hard player's review of a finished game, end to end: the real bot, the emulator,
a real redis-server. The game is the written-out deal of ``test_ai_review`` (a 24-card
duel where Ann takes 10♥ holding the K♠ that wins), played through hand taps."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.harness import Harness, open_lobby, press, set_options
from test_ai_review import ENDGAME_ACTIONS, ENDGAME_DECK

import bot.app.review_worker as review_worker
import bot.domain.review as domain_review
from bot.app import ids as game_ids
from bot.app.review_worker import ReviewWorker
from bot.domain import callbacks
from bot.domain.place import Place
from bot.domain.review_deal import Redeal
from bot.wiring.application import REVIEWS_KEY
from engine import Card, Series, new_game, parse_action
from sandbox.emulator import EmuMessage

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100777
ANN, BOB = 31, 32
GAME_ID = "rev001"
DECK = tuple(Card.parse(c) for c in ENDGAME_DECK.split())
REVIEWING = "Reviewing your game"
RESULT = "the Hard player's review"


def fixed_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot deals ``DECK`` (dealer 0, lowest trump leads), and the review knows it:
    the one function a stored deck will replace."""
    monkeypatch.setattr(game_ids, "new_game_id", lambda: GAME_ID)

    def deal(self: Series, *, seed: int | None = None, deck: Any = None) -> Any:
        return new_game(self.rules, self.num_players, deck=DECK, dealer=0, first_game=True)

    monkeypatch.setattr(Series, "next_game", deal)
    monkeypatch.setattr(
        domain_review, "initial_deal", lambda game: Redeal(None, DECK, 0, first_game=True)
    )


def latest_bot_message(h: Harness, user: int) -> EmuMessage:
    return [m for m in h.emu.messages(user) if m.from_bot][-1]


async def play_recorded_game(h: Harness) -> None:
    """Both players open the bot, Ann opens a 24-card lobby, Bob joins, and every
    recorded action is tapped by its player on their hand message."""
    for uid, name in ((ANN, "Ann"), (BOB, "Bob")):
        h.emu.add_user(uid, name)
    h.emu.add_group(GROUP, "Card Club", members=[ANN, BOB], admins=[], creator=ANN)
    for uid in (ANN, BOB):
        await h.emu.user_starts_bot(uid)
        await h.wait_text(uid, "Hi!")
    lobby = await open_lobby(h, GROUP, ANN)
    await press(h, BOB, GROUP, lobby.message_id, text="Join")
    await set_options(h, ANN, GROUP, lobby.message_id, deck=24)
    await h.wait_text(GROUP, "Deck: 24")
    await press(h, ANN, GROUP, lobby.message_id, text="Start")
    users = (ANN, BOB)
    for text in ENDGAME_ACTIONS.split("; "):
        seat, action = text.split(": ")
        user = users[int(seat)]
        step = (await h.table(GROUP)).engine_state().step
        data = callbacks.encode_move(Place(GROUP), GAME_ID, step, parse_action(action))
        await h.emu.wait_for(lambda u=user: any(m.from_bot for m in h.emu.messages(u)))
        handle = await h.emu.user_sends_callback(
            user, user, latest_bot_message(h, user).message_id, data
        )
        answer = await asyncio.wait_for(handle.answer(), 5)
        # Taken: the answer names the move to its maker (never a refusal).
        assert answer.text is not None and answer.text.startswith("✓ "), f"{text}: {answer.text}"
    await h.wait_text(GROUP, "Game over")
    assert (await h.table(GROUP)).final_durak == 0


async def result_hand(h: Harness, user: int) -> EmuMessage:
    """The user's finished hand: their result line with the 🔍 Review button."""

    def find() -> EmuMessage | None:
        for m in reversed(h.emu.messages(user)):
            if m.from_bot and any(b["text"] == "🔍 Review" for row in m.buttons for b in row):
                return m
        return None

    return await h.emu.wait_for(find, 10, what="the result with its Review button")


def results_in(h: Harness, user: int) -> list[EmuMessage]:
    return [m for m in h.emu.messages(user) if m.from_bot and RESULT in m.text]


class Gate:
    """Holds the review's judging after its first few decisions until released, so a
    test sees it running (the judging runs in a thread: the harness has no pool)."""

    def __init__(self, real: Callable[..., Any], after: int) -> None:
        self.real = real
        self.after = after
        self.calls = 0
        self.open = threading.Event()

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        if self.calls > self.after:
            self.open.wait(60)
        return self.real(*args)


async def test_review_names_the_mistake_once_and_answers_busy_and_running(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed_deal(monkeypatch)
    async with make_harness(throw_in_window=60.0, reviews_per_minute=1) as h:
        await h.start_bot()
        await play_recorded_game(h)
        worker = h.bot.app.bot_data[REVIEWS_KEY]
        assert isinstance(worker, ReviewWorker)
        ann_hand, bob_hand = await result_hand(h, ANN), await result_hand(h, BOB)
        assert "durak" in ann_hand.text

        # Bob's review, held after two decisions (progress edits at every decision here).
        gate = Gate(review_worker.judge_point, after=2)
        monkeypatch.setattr(review_worker, "judge_point", gate)
        worker.progress_every = 0.0
        answer = await press(h, BOB, BOB, bob_hand.message_id, text="🔍 Review")
        assert answer.text is None
        await h.wait_text(BOB, "decision 2 of")
        answer = await press(h, BOB, BOB, bob_hand.message_id, text="🔍 Review")
        assert answer.text == "Your review is already running: the result comes here."
        # The fleet's one review this minute is Bob's: Ann is told the reviewer is busy.
        answer = await press(h, ANN, ANN, ann_hand.message_id, text="🔍 Review")
        assert answer.text == "The reviewer is busy, try again in a minute."
        assert not any(REVIEWING in m.text for m in h.emu.messages(ANN) if m.from_bot)
        gate.open.set()
        await h.emu.wait_for(lambda: results_in(h, BOB), 60, what="Bob's review")

        # A minute later Ann's review runs at the default budget and pace.
        monkeypatch.setattr(review_worker, "judge_point", gate.real)
        worker.progress_every = review_worker.PROGRESS_EVERY
        h.clock.advance(61)
        judged = worker.judged
        started = time.monotonic()
        answer = await press(h, ANN, ANN, ann_hand.message_id, text="🔍 Review")
        assert answer.text is None
        await h.wait_text(ANN, REVIEWING)
        found = await h.emu.wait_for(lambda: results_in(h, ANN), 60, what="Ann's review")
        wall = time.monotonic() - started
        decisions = worker.judged - judged
        print(f"\nreview wall time {wall:.2f} s for {decisions} decisions")
        result = found[0]
        print(result.text)
        lines = result.text.split("\n")
        assert f"review of your {decisions} decisions" in lines[0]
        assert 2 <= len(lines) <= 4
        assert lines[1].startswith("1. Bout ") and "you took 10♥️" in lines[1]
        assert "went from 0% to 100%; beating 10♥️ with K♠ kept it at 0%" in lines[1]
        assert wall < 30, wall
        # The progress message became the result: one message, edited at most once per
        # 3 s while it worked (and once into the result).
        progress = [
            m for m in h.emu.messages(ANN) if m.from_bot and m.message_id >= result.message_id
        ]
        assert progress == [result]
        assert result.edit_count <= 1 + wall / review_worker.PROGRESS_EVERY + 1

        # Asking again shows the stored review again: no decision judged anew.
        await h.settle()
        answer = await press(h, ANN, ANN, ann_hand.message_id, text="🔍 Review")
        assert answer.text == "Your review, once more."
        again = await h.emu.wait_for(
            lambda: results_in(h, ANN)[1:] or None, 10, what="the review again"
        )
        assert again[0].text == result.text and worker.judged == judged + decisions
        assert len(results_in(h, BOB)) == 1


async def test_a_worker_dying_mid_review_leaves_it_to_another_one_result_message(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed_deal(monkeypatch)
    async with make_harness(throw_in_window=60.0) as h:
        await h.start_bot()
        await play_recorded_game(h)
        first = h.bot.app.bot_data[REVIEWS_KEY]
        ann_hand = await result_hand(h, ANN)
        gate = Gate(review_worker.judge_point, after=1)
        monkeypatch.setattr(review_worker, "judge_point", gate)
        answer = await press(h, ANN, ANN, ann_hand.message_id, text="🔍 Review")
        assert answer.text is None
        await h.wait_text(ANN, REVIEWING)
        await h.emu.wait_for(lambda: gate.calls > 1, 10, what="the review under way")
        await first.stop()  # the worker dies holding the job's lease
        monkeypatch.setattr(review_worker, "judge_point", gate.real)
        await h.start_bot_offline()  # another worker of the fleet
        worker = h.offline[-1].bot_data[REVIEWS_KEY]
        worker.start()
        # Not before the lease has run out...
        answer = await press(h, ANN, ANN, ann_hand.message_id, text="🔍 Review")
        assert answer.text == "Your review is already running: the result comes here."
        assert worker.judged == 0
        h.clock.advance(review_worker.LEASE + 1)
        found = await h.emu.wait_for(lambda: results_in(h, ANN), 60, what="the review")
        gate.open.set()
        await h.settle()
        assert worker.judged > 0 and "you took 10♥️" in found[0].text
        # One message: the progress message became the result.
        assert [m for m in h.emu.messages(ANN) if m.from_bot and REVIEWING in m.text] == []
        assert len(results_in(h, ANN)) == 1
