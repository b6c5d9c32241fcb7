"""The chaos soak, lean: a few groups play for 25 seconds (then finish their games)
through three webhook workers on a real Redis Cluster while workers are killed with
SIGKILL, a master fails over and the Bot API fails calls or answers late; every game must
end with every message showing its stored record, one result each, counted once, no stray
hand beyond one per kill and every tap answered (``bench/chaos_soak.py``; the full soak
runs there, for ten minutes)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import chaos_soak  # bench/ is not a package: its folder goes on the path

LEAN = chaos_soak.Options(
    groups=5,
    seconds=25,
    kill_every=10,  # the first kill comes within 13 s
    failover_at=10,
    fault_every=2.5,
    think_min=0.1,
    think_max=0.4,
    ai_every=5,  # one group of five seats a computer player
    deck=24,  # short games: every group's game ends within the drain
    drain=50,
    settle=30,
    output_lease=3,  # a killed worker's output is taken over sooner than the default 10 s
)


async def test_games_survive_kills_a_failover_and_a_faulty_bot_api(tmp_path: Path) -> None:
    options = dataclasses.replace(LEAN, log_dir=tmp_path)
    result = await chaos_soak.run(options)
    chaos_soak.report(result)
    assert result["failures"] == [], result["failures"]
    assert all(result["checks"].values())
    assert result["kills"] >= 1
    assert result["failover"]["promoted"]
    assert result["faults"]["failed_calls"] > 0 and result["faults"]["late_answers"] > 0
    assert result["games_finished"] == result["games_started"] >= LEAN.groups
    assert result["games_checked"] == result["games_finished"]
    assert result["messages_compared"] >= 3 * result["games_checked"]  # table and two hands
    assert result["moves"] > 0 and result["tap_answer_p99_ms"] is not None
