"""Memory soak: does the bot's resident memory stay flat as ever more chats use it?

Builds the bot's games, outbox and handler services with the wiring's own build functions
(``bot.wiring.application``), given stubs for the Bot API, Redis and the clock, and
drives the outbox and admin cache in-process, one chat after another: each group gets its
table shown (an edit), a command reply and an admin check; each of its players a private
message. The Bot API and Redis are stubs answering at once, so only the bot's own per-chat
memory is measured (Redis keeps the games in its own process). A simulated clock moves 0.05 s per
chat, so chats go idle the way they do in a real day.

    .venv/bin/python bench/memory_soak.py --chats 50000

Prints RSS (MiB) every ``--every`` chats and at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import Any

import fakeredis
from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.domain.place import Place, private_chat
from bot.domain.records import ChatGame, ChatSettings, UserRecord
from bot.ops.settings import Settings
from bot.store.storage import OwedOutput, Screen, Storage
from bot.wiring.application import build_games, build_services


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class SimClock:
    """Moves a little on every reading, so paced waits always end."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        self.now += 1e-6
        return self.now


class StubBot:
    """Answers every call at once, like a Bot API with no latency."""

    def __init__(self) -> None:
        self.next_id = 100

    async def edit_message_text(self, *args: Any, **kwargs: Any) -> bool:
        return True

    async def send_message(self, chat_id: int, *args: Any, **kwargs: Any) -> Any:
        self.next_id += 1
        return type("Sent", (), {"message_id": self.next_id})()

    async def do_api_request(self, endpoint: str, api_kwargs: dict[str, Any]) -> Any:
        """The outbox's raw sends and edits (``bot.output.outbox.RAW_SEND``, ``RAW_EDIT``)."""
        if endpoint.lower() == "sendmessage":
            self.next_id += 1
            return {"message_id": self.next_id}
        return True

    async def delete_message(self, *args: Any, **kwargs: Any) -> bool:
        return True

    async def get_chat_member(self, chat_id: int, user_id: int) -> Any:
        return type("Member", (), {"status": "member"})()


class StubStorage(Storage):
    """Every group has a lobby on screen; nothing is written (Redis is not measured)."""

    async def load_table(self, place: Place) -> ChatGame | None:
        return ChatGame(
            game_id="abcdef",
            chat_id=place.chat_id,
            topic_id=place.topic_id,
            creator_id=1,
            lobby_message_id=1,
            chat_title="g",
        )

    async def update_table(self, place: Place, change: Any) -> Any:
        return None

    async def peek_screen(
        self, place: Place, role: str
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        return OwedOutput(0, {}, {}, {}), await self.load_table(place), Screen(place, role)

    async def open_screen(
        self, place: Place, role: str
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        owed, table, screen = await self.peek_screen(place, role)
        screen.claimed = True
        return owed, table, screen

    async def close_screen(self, place: Place, screen: Screen) -> None:
        return None

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        return ChatSettings(lang="en")

    async def user(self, user_id: int) -> UserRecord:
        return UserRecord(dm_open=True)

    async def mark_hand_shown(self, *args: Any) -> None:
        return None


async def soak(chats: int, every: int) -> list[tuple[int, float]]:
    settings = Settings(
        telegram_bot_token=SecretStr("1:soak"),
        group_edit_interval=0,
        private_interval=0,
        global_rate=1_000_000,
        calm_delay=0,
    )
    clock = SimClock()
    bot = StubBot()
    storage = StubStorage(fakeredis.aioredis.FakeRedis(), finished_ttl=10, idle_ttl=10)
    games = build_games(
        settings,
        storage,
        bot,  # type: ignore[arg-type]
        None,
        clock=time.time,  # wall-clock times (when a hand landed), as in the bot
        ai_processes=1,
        pacing_clock=clock,  # what the lanes and the global budget pace by
    )
    services = build_services(games)
    box = games.box
    figures = []
    for n in range(1, chats + 1):
        group = Place(-1_000_000 - n)
        table = await storage.load_table(group)
        assert table is not None
        box.refresh(table)
        box.say(group, (await games.render_group(table)))
        for user in (2 * n, 2 * n + 1):
            box.say(private_chat(user), (await games.render_group(table)))
            await services.members.is_admin(group.chat_id, user, bot)
        clock.now += 0.05
        if n % 100 == 0:
            await box.idle()
        if n % every == 0:
            await box.idle()
            gc.collect()
            figures.append((n, rss_mib()))
            print(f"{n:>7} chats: RSS {figures[-1][1]:7.1f} MiB, lanes {len(box.lanes)}")
    await box.close()
    games.ai.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=50_000)
    parser.add_argument("--every", type=int, default=5_000)
    args = parser.parse_args()
    print(f"start: RSS {rss_mib():.1f} MiB")
    figures = asyncio.run(soak(args.chats, args.every))
    first, last = figures[0][1], figures[-1][1]
    print(f"after {figures[0][0]} chats {first:.1f} MiB, after {figures[-1][0]} {last:.1f} MiB")


if __name__ == "__main__":
    main()
