"""Records survive upgrades: fixtures written by earlier releases still load and play on;
an unreadable record is moved to a quarantine key and the group is told, never overwritten."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.domain.flow import Moment, Person, Timing, join, play
from bot.domain.place import Place
from bot.domain.records import ChatGame, ChatSettings, UserRecord
from bot.domain.schema import CURRENT, UnreadableRecord, upgrade
from bot.ops import metrics
from bot.render import hand_message
from bot.store.storage import RUNNING_KEY, Storage, Write, settings_key, table_key, user_key
from engine import legal_actions, waiting_for
from locales import translator

FIXTURES = Path(__file__).parent / "fixtures" / "records"
CHAT = -1001  # the fixtures' group


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("v*/*.json"))


def storage(redis: Redis) -> Storage:
    return Storage(redis, finished_ttl=3600, idle_ttl=3600)


def test_there_are_fixtures_for_every_schema_up_to_the_current_one() -> None:
    versions = {int(path.parent.name[1:]) for path in fixture_files()}
    assert versions == set(range(1, max(CURRENT.values()) + 1))
    kinds = {path.stem.split("_")[0] for path in fixture_files()}
    assert kinds == {"table", "chat", "user"}


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
async def test_an_old_record_is_upgraded_and_keeps_working(path: Path, real_redis: Redis) -> None:
    store, raw = storage(real_redis), path.read_text()
    if path.stem.startswith("table"):
        await real_redis.set(table_key(Place(CHAT)), raw)
        table = await store.load_table(Place(CHAT))
        assert table is not None and table.schema_version == CURRENT["Table"]
        assert table.game_id == json.loads(raw)["game_id"]
        if table.phase == "lobby":
            moment = Moment(time.time(), Timing(turn_timeout=60, ai_delay=0, notify_quiet=20))
            await store.update_table(
                Place(CHAT), lambda t: _write(join(t, moment, t.game_id, Person(9, "Cy"))[0])
            )
            again = await store.load_table(Place(CHAT))
            assert again is not None and [s.name for s in again.seats][-1] == "Cy"
        else:
            state = table.engine_state()  # the engine reads the stored position
            movers = [p for p in range(len(table.seats)) if legal_actions(state, p)]
            assert bool(movers) == (table.phase == "playing")
    elif path.stem.startswith("chat"):
        await real_redis.set(settings_key(CHAT), raw)
        chat = await store.chat_settings(CHAT)
        assert chat == ChatSettings.model_validate(upgrade("ChatSettings", raw))
        assert chat.lang is not None  # the fixture's language, not the default
    else:
        await real_redis.set(user_key(102), raw)
        user = await store.user(102)
        assert user == UserRecord.model_validate(upgrade("UserRecord", raw))
        assert user.dm_open  # the fixture's value, not the default


def _write(table: ChatGame) -> Write[None]:
    return Write(table, None)


def test_a_record_newer_than_the_code_is_not_misread() -> None:
    raw = (FIXTURES / "v1" / "table_playing.json").read_text()
    newer = json.dumps(json.loads(raw) | {"schema": CURRENT["Table"] + 1})
    with pytest.raises(UnreadableRecord, match="schema"):
        upgrade("Table", newer)


def damaged_records() -> dict[str, str]:
    raw = json.loads((FIXTURES / "v1" / "table_playing.json").read_text())
    return {
        "not-json": '{"schema": 1, "game_id": "fixture1", "pha',
        "future-schema": json.dumps(raw | {"schema": 99}),
        "unknown-field": json.dumps(raw | {"surprise": True}),
        "wrong-type": json.dumps(raw | {"seats": "nobody"}),
    }


@pytest.mark.parametrize("kind", list(damaged_records()))
async def test_an_unreadable_table_is_quarantined_not_overwritten(
    kind: str, real_redis: Redis
) -> None:
    raw = damaged_records()[kind]
    told: list[tuple[int, str]] = []
    store = Storage(
        real_redis,
        finished_ttl=3600,
        idle_ttl=3600,
        on_quarantine=lambda place, game: told.append((place.chat_id, game)),
    )
    await real_redis.set(table_key(Place(CHAT)), raw)
    before = metrics.QUARANTINED.labels("table")._value.get()
    # A writer (e.g. /newgame) finds no readable game: it may start a new one, but the
    # old record is moved aside first, byte for byte.
    fresh = json.loads((FIXTURES / "v1" / "table_lobby.json").read_text()) | {"game_id": "new1"}
    result = await store.update_table(
        Place(CHAT), lambda t: Write(ChatGame.model_validate(fresh) if t is None else t, t)
    )
    assert result is None  # the change saw no table
    kept = [k async for k in real_redis.scan_iter(match=f"durak:{{{CHAT}}}:quarantine:*")]
    assert len(kept) == 1 and await real_redis.get(kept[0]) == raw.encode()
    assert await real_redis.ttl(kept[0]) > 0
    stored = await store.load_table(Place(CHAT))
    assert stored is not None and stored.game_id == "new1"
    game_id = "unknown" if kind == "not-json" else "fixture1"
    assert told == [(CHAT, game_id)]
    assert metrics.QUARANTINED.labels("table")._value.get() == before + 1


async def test_a_running_game_that_cannot_be_restored_is_announced(
    make_harness: Any, real_redis: Redis
) -> None:
    """A worker starting up finds an unreadable running game: the group is told once,
    the record waits in quarantine, and a new game can be opened."""
    raw = json.loads((FIXTURES / "v1" / "table_playing.json").read_text())
    async with make_harness() as h:
        h.emu.add_user(101, "Alice")
        h.emu.add_user(102, "Bob")
        h.emu.add_group(CHAT, "Fixture group", members=[101, 102], creator=101)
        await real_redis.set(table_key(Place(CHAT)), json.dumps(raw | {"schema": 99}))
        await real_redis.sadd(RUNNING_KEY, str(CHAT))
        await h.start_bot()
        await h.wait_text(CHAT, "This game was lost")
        await h.start_bot_offline()  # a second worker reading the same chat says nothing
        assert await h.bots[0].games.storage.load_table(Place(CHAT)) is None
        await h.settle()
        told = [m for m in h.emu.messages(CHAT) if m.from_bot and "was lost" in m.text]
        assert len(told) == 1
        kept = [k async for k in real_redis.scan_iter(match=f"durak:{{{CHAT}}}:quarantine:*")]
        assert len(kept) == 1
        await h.emu.user_sends(101, CHAT, "/newgame")
        await h.wait_text(CHAT, "new game")


async def test_stored_chat_settings_get_the_group_settings_at_their_defaults(
    real_redis: Redis,
) -> None:
    """/settings' defaults, who starts games, turn timeout and tidy-up came later: settings
    stored before them load with each at its default, and are written back unchanged."""
    raw = (FIXTURES / "v1" / "chat_settings.json").read_text()
    await real_redis.set(settings_key(CHAT), raw)
    chat = await storage(real_redis).chat_settings(CHAT)
    assert (chat.defaults, chat.starts, chat.turn_timeout, chat.tidy) == (
        None,
        "anyone",
        None,
        True,
    )
    assert json.loads(chat.to_json()) == json.loads(raw) | {"how_to_shown": False}


async def test_an_old_record_without_a_topic_loads_and_plays_in_its_chat(
    real_redis: Redis,
) -> None:
    """Records written before games per topic: no ``topic_id``, no ``topic_name``. They
    are the chat's game (topic None), name the group alone, take a move, are written back
    without the new fields (code from before them still reads them), and play to the end."""
    store, raw = storage(real_redis), (FIXTURES / "v1" / "table_playing.json").read_text()
    assert "topic" not in raw
    await real_redis.set(table_key(Place(CHAT)), raw)
    table = await store.load_table(Place(CHAT))
    assert table is not None and table.topic_id is None and table.topic_name == ""
    assert table.place == Place(CHAT)
    state = table.engine_state()
    seat = next(p for p in range(len(table.seats)) if legal_actions(state, p))
    header = hand_message(table, seat, translator("en")).text.splitlines()[0]
    assert "Fixture group" in header and "›" not in header
    user, action = table.seats[seat].user_id, legal_actions(state, seat)[0]
    assert user is not None
    moment = Moment(time.time(), Timing(turn_timeout=60, ai_delay=0, notify_quiet=20))
    await store.update_table(
        Place(CHAT),
        lambda t: _write(play(t, moment, t.game_id, user, state.step, action)[0]),
    )
    again = await store.load_table(Place(CHAT))
    assert again is not None and again.engine_state().step == state.step + 1
    stored = json.loads(await real_redis.get(table_key(Place(CHAT))))
    assert "topic_id" not in stored and "topic_name" not in stored
    # ...and is played to its end, every move stored and read back as a running game is.
    rng = random.Random(7)
    for _ in range(3000):
        game = await store.load_table(Place(CHAT))
        assert game is not None
        if game.phase != "playing":
            break
        now = game.engine_state()
        seat = next(p for p in waiting_for(now) if legal_actions(now, p))
        mover, move = game.seats[seat].user_id, rng.choice(legal_actions(now, seat))
        assert mover is not None
        await store.update_table(
            Place(CHAT),
            lambda t, m=mover, a=move, s=now.step: _write(play(t, moment, t.game_id, m, s, a)[0]),
        )
    finished = await store.load_table(Place(CHAT))
    assert finished is not None and finished.phase == "finished" and finished.engine_state().over


def test_a_topics_game_keeps_its_topic_and_name() -> None:
    raw = json.loads((FIXTURES / "v1" / "table_lobby.json").read_text())
    game = ChatGame.model_validate(raw | {"topic_id": 7, "topic_name": "Cards"})
    back = ChatGame.model_validate_json(game.to_json())
    assert back.place == Place(CHAT, 7) and back.topic_name == "Cards"
