"""How the bot feels to people who take a few seconds per decision, through the emulator.

The bot runs as its real entry point (``python -m bot``) against the Bot API emulator with
Telegram's flood limits on and a real redis-server, as in ``bench/bot_load.py``. Every
group seats ``--players`` humans; in every ``--idle-every``-th group the last one never
taps. The others decide on their hand as it looks (beat, or open the picker and beat;
take when they cannot beat; throw in or pass, "Done", half and half; lead one card),
think ``--think-min`` to ``--think-max`` seconds, then tap. A change that lands within
``REACTION`` of the tap does not stop the finger (the phone sends the old button, as
Telegram's does); one that landed earlier makes the player decide again.

    .venv/bin/python bench/human_pace.py --groups 8 --players 3 --seconds 120

Reports:

- taps answered "Too late" (a move the table has moved past: mostly a throw-in window
  that closed under the player), out of every tap; and decisions a change overtook
  before the tap, with how many of them found their throw-in window gone;
- the longest stall an idle player caused: while only they could still add a card (the
  defender is done, everyone else passed), how long the bout waited before it moved on;
- own-move latency: from a move's tap to the first change of the tapper's private chat
  (their hand edited, or a new hand), p50 and p95;
- Bot API calls per move (the players' accepted moves; also per game step, which counts
  the bot's own moves for the idle player), and 429s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bot_load import TOKEN, hand_buttons, redis_backend, set_up

from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.schema import current_json
from bot.store.keys import table_key
from engine import must_act, waiting_for
from sandbox.emulator import BotApiEmulator, RateLimits
from sandbox.emulator.events import Subscription

MOVE_OPS = "aBbtprs"
MOVE_TAKEN = "✓ "
TOO_LATE = "Too late"
REACTION = 0.8
"""Seconds before a tap within which a change on screen no longer stops the finger."""


@dataclass
class Tally:
    taps: int = 0
    moves: int = 0
    too_late: int = 0
    toasts: dict[str, int] = field(default_factory=dict)
    own_latency: list[float] = field(default_factory=list)
    own_unseen: int = 0
    stalls: list[float] = field(default_factory=list)
    looked_again: int = 0
    """Decisions a change seen in time made the player redo (no tap)."""
    closed_while_thinking: int = 0
    """Of those: a throw-in or pass whose window was gone when the player looked again."""
    steps: int = 0


def pick(buttons: list[tuple[int, int, str]], rng: random.Random) -> tuple[int, str] | None:
    """(message id, data) of what a simple human presses on this hand, or None."""
    by_op: dict[str, list[tuple[int, str]]] = {}
    for _, mid, data in buttons:
        body = data.split(":")[4]
        if body and body[0] in MOVE_OPS:
            by_op.setdefault(body[0], []).append((mid, data))
    singles = [b for b in by_op.get("a", []) if len(b[1].split(":")[4]) == 2]
    for op in ("B", "b"):
        if op in by_op:
            return by_op[op][0]
    if "t" in by_op:
        return by_op["t"][0]
    if "p" in by_op:
        return rng.choice(singles) if singles and rng.random() < 0.5 else by_op["p"][0]
    if singles:
        return singles[0]
    return None


def chat_marks(emu: BotApiEmulator, user: int) -> dict[int, int]:
    """message id -> edit count of the bot's messages in a private chat."""
    chat = emu.chat(user)
    if chat is None:
        return {}
    return {m.message_id: m.edit_count for m in chat.messages.values() if m.from_bot}


async def own_change(
    emu: BotApiEmulator, user: int, before: dict[int, int], tapped: float, tally: Tally
) -> None:
    """Time from a tap to the first change of the tapper's private chat."""
    try:
        await emu.wait_for(lambda: chat_marks(emu, user) != before, 15.0)
    except TimeoutError:
        tally.own_unseen += 1
        return
    tally.own_latency.append(time.monotonic() - tapped)


async def think(changes: Subscription, seconds: float) -> float | None:
    """Wait ``seconds`` (the player thinks); when their chat last changed meanwhile."""
    deadline = time.monotonic() + seconds
    changed = None
    while (left := deadline - time.monotonic()) > 0:
        try:
            await changes.get(timeout=left)
        except TimeoutError:
            break
        changed = time.monotonic()
    return changed


async def tap(
    emu: BotApiEmulator, user: int, mid: int, data: str, tally: Tally
) -> tuple[str, float, dict[int, int]] | None:
    """Press ``data`` on message ``mid`` as the phone sends it: the button the finger
    aimed at, even if an edit took it away a moment ago. (toast, when, chat before)."""
    before = chat_marks(emu, user)
    tapped = time.monotonic()
    try:
        handle = await emu.user_sends_callback(user, user, mid, data)
        answer = await handle.answer(timeout=30)
    except Exception:
        return None  # the message is gone
    tally.taps += 1
    text = answer.text or ""
    if text.startswith(MOVE_TAKEN):
        text = ""  # taken: the bot says the move to its maker ("✓ You beat …")
    if text:
        tally.toasts[text[:40]] = tally.toasts.get(text[:40], 0) + 1
        tally.too_late += text.startswith(TOO_LATE)
    return text, tapped, before


async def human(
    emu: BotApiEmulator,
    user: int,
    stop_at: float,
    rng: random.Random,
    args: argparse.Namespace,
    tally: Tally,
) -> None:
    """Decides on the hand as it looks, thinks, then taps. A change that lands while the
    finger is already on its way (``REACTION``) does not stop the tap; one seen earlier
    makes the player look again."""
    acted: set[tuple[int, int]] = set()
    """(message id, edit count) of every hand version this player already acted on."""
    waiters: list[asyncio.Task[None]] = []
    with emu.subscribe([user]) as changes:
        while time.monotonic() < stop_at:
            fresh = [b for b in hand_buttons(emu, user) if (b[1], b[0]) not in acted]
            choice = pick(fresh, rng) if fresh else None
            if choice is None:
                try:
                    await changes.get(timeout=max(0.1, stop_at - time.monotonic()))
                except TimeoutError:
                    break
                continue
            mid, data = choice
            message = emu.message(user, mid)
            acted.add((mid, message.edit_count if message is not None else -1))
            changed = await think(changes, rng.uniform(args.think_min, args.think_max))
            still = any(b[1] == mid and b[2] == data for b in hand_buttons(emu, user))
            if not still and (changed is None or time.monotonic() - changed > REACTION):
                tally.looked_again += 1
                closed = data.split(":")[4][0] in "ap" and not any(
                    b[2].split(":")[4][0] == "p" for b in hand_buttons(emu, user)
                )
                tally.closed_while_thinking += closed
                continue
            tapped = await tap(emu, user, mid, data, tally)
            if tapped is None or tapped[0]:
                continue
            if data.split(":")[4][0] == "b":  # the picker: "beat which card", same decision
                await asyncio.sleep(rng.uniform(0.3, 0.8))
                beat = pick(hand_buttons(emu, user), rng)
                if beat is None:
                    continue
                tapped = await tap(emu, user, beat[0], beat[1], tally)
                if tapped is None or tapped[0]:
                    continue
            tally.moves += 1
            waiters.append(asyncio.create_task(own_change(emu, user, tapped[2], tapped[1], tally)))
    await asyncio.gather(*waiters)


async def watch_table(
    redis: Redis, chat: int, idle: int | None, stop_at: float, tally: Tally
) -> None:
    """Counts the game's steps; with an idle player, times each stall only they cause."""
    last_step = -1
    held: tuple[int, float] | None = None
    while time.monotonic() < stop_at:
        raw = await redis.get(table_key(Place(chat)))
        now = time.monotonic()
        if raw is not None:
            game = ChatGame.model_validate_json(current_json("Table", raw))
            if game.phase == "playing":
                state = game.engine_state()
                if last_step >= 0 and state.step > last_step:
                    tally.steps += state.step - last_step
                last_step = state.step
                if held is not None and held[0] != state.step:
                    tally.stalls.append(now - held[1])
                    held = None
                seat = game.seat_of(idle) if idle is not None else None
                only_idle = (
                    seat is not None
                    and game.seats[seat].ai is None
                    and (must_act(state).kind == "throw_in" and waiting_for(state) == (seat,))
                )
                if only_idle and held is None:
                    held = (state.step, now)
        await asyncio.sleep(0.1)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


async def measure(args: argparse.Namespace, redis_env: dict[str, str]) -> None:
    emu = BotApiEmulator(rate_limits=RateLimits())
    await emu.start()
    emu.add_bot(TOKEN, username="durak_bench_bot")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_"))},
        **redis_env,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": emu.url,
        "TURN_TIMEOUT": str(args.turn_timeout),
        "LOG_LEVEL": "INFO",
    }
    redis = Redis.from_url(redis_env["REDIS_URL"])
    with open(args.bot_log, "w") as log:
        bot = subprocess.Popen([sys.executable, "-m", "bot"], env=env, stdout=log, stderr=log)
        try:
            tables = await set_up(emu, args.groups, args.players)
            await emu.wait_for(
                lambda: all(any(hand_buttons(emu, u) for u in users) for _, users in tables), 300
            )
            emu.reset_stats()
            tally = Tally()
            rng = random.Random(args.seed)
            stop_at = time.monotonic() + args.seconds
            tasks = []
            for g, (chat, users) in enumerate(tables):
                idle = users[-1] if args.idle_every and g % args.idle_every == 0 else None
                tasks.append(watch_table(redis, chat, idle, stop_at, tally))
                for user in users:
                    if user != idle:
                        tasks.append(
                            human(emu, user, stop_at, random.Random(rng.random()), args, tally)
                        )
            await asyncio.gather(*tasks)
            report(args, emu, tally)
        finally:
            bot.send_signal(signal.SIGINT)
            try:
                await asyncio.to_thread(bot.wait, 15)
            except subprocess.TimeoutExpired:
                bot.kill()
            await redis.aclose()
            await emu.stop()


def report(args: argparse.Namespace, emu: BotApiEmulator, tally: Tally) -> None:
    stats = emu.stats
    calls = stats.total - stats.calls.get("getUpdates", 0)
    sends = calls - stats.calls.get("answerCallbackQuery", 0)
    lat = tally.own_latency
    print(
        f"groups {args.groups} x {args.players} humans (every {args.idle_every}. with an idle "
        f"one), think {args.think_min}-{args.think_max} s, {args.seconds:.0f} s"
    )
    share = 100 * tally.too_late / max(1, tally.taps)
    print(f"taps: {tally.taps}; too late: {tally.too_late} ({share:.1f}%)")
    common = sorted(tally.toasts.items(), key=lambda kv: -kv[1])[:4]
    print(
        f"decisions redone after a change seen in time: {tally.looked_again}, of them a "
        f"throw-in window gone: {tally.closed_while_thinking}"
    )
    print("toasts: " + "; ".join(f"{n} x {t!r}" for t, n in common))
    if tally.stalls:
        print(
            f"idle player's stalls: {len(tally.stalls)}, longest {max(tally.stalls):.1f} s, "
            f"median {statistics.median(tally.stalls):.1f} s"
        )
    if lat:
        print(
            f"own move -> own hand changed: p50 {statistics.median(lat):.2f} s, p95 "
            f"{quantile(lat, 0.95):.2f} s, max {max(lat):.2f} s ({len(lat)} moves, "
            f"{tally.own_unseen} never changed)"
        )
    print(
        f"Bot API calls (without getUpdates): {calls}; per move: {calls / max(1, tally.moves):.2f}"
        f" ({tally.moves} moves); sends and edits per game step: "
        f"{sends / max(1, tally.steps):.2f} ({tally.steps} steps)"
    )
    print(f"by method: {dict(sorted((k, v) for k, v in stats.calls.items() if k != 'getUpdates'))}")
    print(f"429 responses: {stats.too_many_requests}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--players", type=int, default=3, choices=range(2, 7))
    parser.add_argument("--idle-every", type=int, default=2, help="0: nobody idle")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--think-min", type=float, default=2.0)
    parser.add_argument("--think-max", type=float, default=6.0)
    parser.add_argument(
        "--turn-timeout", type=float, default=30.0, help="the idle player's own turns"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bot-log", default="/tmp/durak_human_pace_bot.log")
    args = parser.parse_args()
    with redis_backend(False) as redis_env:
        asyncio.run(measure(args, redis_env))


if __name__ == "__main__":
    main()
