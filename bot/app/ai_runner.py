"""Computer players' thinking, kept off the event loop.

Easy and normal players think in a thread; hard players search, so they get a
process pool and never hold the GIL against other groups' games. A fresh player is
made for every move (its memory is rebuilt from ``view.history``), seeded from the
game id and step so a game replays identically.

A computer seat must never stall a table: if a level fails (raises, or returns a
move that is not legal), the next simpler level moves instead, and the failure is
logged loudly so it gets fixed.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from bot.domain.records import AiLevel
from bot.ops import metrics
from engine import Action, PlayerView

T = TypeVar("T")
log = logging.getLogger(__name__)

FALLBACKS: dict[str, tuple[str, ...]] = {
    "hard": ("hard", "normal", "easy"),
    "normal": ("normal", "easy"),
    "easy": ("easy",),
}


def ai_seed(game_id: str, step: int, seat: int) -> int:
    digest = hashlib.sha256(f"{game_id}:{step}:{seat}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def choose(level: str, seed: int, view: PlayerView) -> Action:
    """The move of a ``level`` computer player, falling back to simpler levels."""
    import ai

    for candidate in FALLBACKS.get(level, (level,)):
        try:
            action: Action = ai.player(candidate, seed=seed).choose(view)
        except Exception:
            log.exception(
                "%s computer player failed at step %s; trying a simpler one", candidate, view.step
            )
            continue
        if action in view.legal_actions:
            return action
        log.error("%s computer player chose illegal %s at step %s", candidate, action, view.step)
    if not view.legal_actions:
        raise ValueError(f"seat {view.player} has no move at step {view.step}")
    # Every level failed: keep the table moving with the first legal move.
    return view.legal_actions[0]


class AiRunner:
    def __init__(self, processes: int = 1) -> None:
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None

    async def choose(self, level: AiLevel, seed: int, view: PlayerView) -> Action:
        started = time.monotonic()
        try:
            return await self._choose(level, seed, view)
        finally:
            metrics.ai_thought(level, time.monotonic() - started)

    async def _choose(self, level: AiLevel, seed: int, view: PlayerView) -> Action:
        if level == "hard" and self.processes > 0:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=self.processes)
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(self._pool, choose, level, seed, view)
            except BrokenProcessPool:
                # A worker died (e.g. killed for memory): start a new pool next time and
                # let this move be made in a thread rather than stall the game.
                log.exception("the computer players' process pool broke; recreating it")
                self._pool = None
        return await asyncio.to_thread(choose, level, seed, view)

    async def think(self, work: Callable[..., T], *args: Any) -> T:
        """Other search work (a game's review) in the same pool, one short piece at a
        time, so the Hard players' moves queue behind at most one piece of it."""
        if self.processes > 0:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=self.processes)
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(self._pool, work, *args)
            except BrokenProcessPool:
                log.exception("the computer players' process pool broke; recreating it")
                self._pool = None
        return await asyncio.to_thread(work, *args)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
