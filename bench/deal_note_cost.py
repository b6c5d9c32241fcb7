"""What the deal code message costs: Bot API calls per move with and without it.

Plays ``--games`` two-human games through the emulator (the end-to-end tests' harness,
their pacing: none), once with verifiable deals and once with the deal left out (as a game
dealt before them), and prints the calls per game and per move of each.

    PYTHONPATH=. .venv/bin/python bench/deal_note_cost.py --games 6
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.harness import FakeClock, harness, open_lobby, play_out, press, redis_server_process

from ai.review import actions_from_events
from bot.app import deals

GROUP = -100900
ANN, BOB = 31, 32


async def one_game(h: Any, verify: bool) -> tuple[Counter[str], int]:
    """The Bot API calls of one game, from /newgame to its result, and its moves."""
    h.emu.reset_stats()
    lobby = await open_lobby(h, GROUP, ANN)
    await press(h, BOB, GROUP, lobby.message_id, text="Join")
    await h.wait_text(GROUP, "2. Bob")
    await press(h, ANN, GROUP, lobby.message_id, text="Start")
    await play_out(h, GROUP, [ANN, BOB], verify_deal=verify)
    await h.settle()
    calls = Counter(h.emu.stats.calls)
    del calls["getUpdates"]
    calls["group sendMessage"] = h.emu.stats.chat_method_calls[(GROUP, "sendMessage")]
    game = await h.table(GROUP)
    return calls, len(actions_from_events(game.engine_state().all_events()))


async def run(games: int, verify: bool) -> tuple[Counter[str], int]:
    total: Counter[str] = Counter()
    moves = 0
    with redis_server_process() as url:
        redis: Redis = Redis.from_url(url)
        async with harness(redis, FakeClock()) as h:
            for uid, name in ((ANN, "Ann"), (BOB, "Bob")):
                h.emu.add_user(uid, name)
            h.emu.add_group(GROUP, "Bench", members=[ANN, BOB], admins=[], creator=ANN)
            await h.start_bot()
            for uid in (ANN, BOB):
                await h.emu.user_starts_bot(uid)
                await h.wait_text(uid, "Hi!")
            for _ in range(games):
                calls, played = await one_game(h, verify)
                total += calls
                moves += played
        await redis.aclose()
    return total, moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=6)
    args = parser.parse_args()
    with_deal = asyncio.run(run(args.games, verify=True))
    secret = deals.deal_for
    deals.deal_for = lambda game: None  # type: ignore[assignment]  # dealt as before
    try:
        without = asyncio.run(run(args.games, verify=False))
    finally:
        deals.deal_for = secret  # type: ignore[assignment]
    for label, (calls, moves) in (("with the deal code", with_deal), ("without", without)):
        group = calls.pop("group sendMessage")
        total = sum(calls.values())
        print(
            f"{label}: {args.games} games, {moves} moves, {total} Bot API calls "
            f"({total / moves:.3f} per move, {total / args.games:.1f} per game; "
            f"group sendMessage {group / args.games:.1f} per game)"
        )


if __name__ == "__main__":
    main()
