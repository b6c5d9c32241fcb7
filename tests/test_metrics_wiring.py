"""The operator's figures come from real traffic: Bot API calls by method and outcome, tap
latency, moves (issue 12's metrics), counted where the requests and taps happen."""

from __future__ import annotations

from typing import Any

import pytest
from support.harness import open_lobby, press

from bot.ops.metrics import REGISTRY
from bot.transport.metered_request import outcome_of

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100700
ANN, BOB = 31, 32


def sample(name: str, **labels: str) -> float:
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_outcomes_by_status() -> None:
    assert [outcome_of(s) for s in (200, 429, 400, 403, 502)] == [
        "ok",
        "retry_after",
        "bad_request",
        "bad_request",
        "error",
    ]


async def test_calls_taps_and_moves_are_counted(make_harness: Any) -> None:
    sent = sample("durak_bot_api_calls_total", method="sendMessage", outcome="ok")
    taps = sample("durak_tap_answer_seconds_count")
    joins = sample("durak_moves_total", kind="join")
    async with make_harness() as h:
        h.emu.add_user(ANN, "Ann")
        h.emu.add_user(BOB, "Bob")
        h.emu.add_group(GROUP, "Metrics Club", members=[ANN, BOB], admins=[], creator=ANN)
        await h.start_bot()
        await h.emu.user_starts_bot(BOB)
        await h.wait_text(BOB, "Hi!")
        lobby = await open_lobby(h, GROUP, ANN)
        await press(h, BOB, GROUP, lobby.message_id, text="Join")
        await h.settle()
    assert sample("durak_bot_api_calls_total", method="sendMessage", outcome="ok") > sent
    assert sample("durak_tap_answer_seconds_count") == taps + 1
    assert sample("durak_moves_total", kind="join") == joins + 1
