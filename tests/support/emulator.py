"""Helpers for tests that drive the emulator directly (a PTB ``Bot`` or raw HTTP calls)."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from sandbox.emulator import BotApiEmulator

TOKEN = "123456:TEST-secret"
OTHER_TOKEN = "654321:OTHER-secret"
ANN, BOB, CAROL = 1001, 1002, 1003
GROUP = -1001234567890


class ManualClock:
    """Monotonic clock the test moves by hand, so rate windows pass without sleeping."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def populate(emu: BotApiEmulator) -> None:
    emu.add_bot(TOKEN, username="durak_test_bot", first_name="Durak")
    emu.add_user(ANN, "Ann", username="ann")
    emu.add_user(BOB, "Bob", language_code="ru")
    emu.add_user(CAROL, "Carol")


async def raw(
    http: aiohttp.ClientSession, emu: BotApiEmulator, method: str, token: str = TOKEN, **params: Any
) -> tuple[int, dict[str, Any]]:
    """Call the Bot API the way PTB does: form data, non-strings JSON-encoded."""
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    async with http.post(f"{emu.url}/bot{token}/{method}", data=form) as resp:
        return resp.status, await resp.json()
