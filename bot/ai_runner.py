"""Computer players' thinking, kept off the event loop.

Easy and normal players think in a thread; hard players search, so they get a
process pool and never hold the GIL against other groups' games. A fresh player is
made for every move (its memory is rebuilt from ``view.history``), seeded from the
game id and step so a game replays identically.
"""

from __future__ import annotations

import asyncio
import hashlib
from concurrent.futures import ProcessPoolExecutor

from bot.records import AiLevel
from engine import Action, PlayerView


def ai_seed(game_id: str, step: int, seat: int) -> int:
    digest = hashlib.sha256(f"{game_id}:{step}:{seat}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def choose(level: str, seed: int, view: PlayerView) -> Action:
    import ai

    action: Action = ai.player(level, seed=seed).choose(view)
    return action


class AiRunner:
    def __init__(self, processes: int = 1) -> None:
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None

    async def choose(self, level: AiLevel, seed: int, view: PlayerView) -> Action:
        if level == "hard" and self.processes > 0:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=self.processes)
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, choose, level, seed, view)
        return await asyncio.to_thread(choose, level, seed, view)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
