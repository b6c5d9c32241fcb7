"""The one Redis repository: typed keys, validated JSON, optimistic transactions.

Keys are per chat with a ``{chat_id}`` hash tag so one chat's keys share a cluster
slot and can change together in one MULTI. Every table change is WATCH / GET /
validate / change / MULTI SET EXEC, retried when another writer got there first:
two taps at the same moment, or two processes, never lose or duplicate a move.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import ValidationError
from redis.asyncio import Redis
from redis.exceptions import WatchError

from bot.records import ChatSettings, StatLine, Table, UserRecord

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_RETRIES = 50
ENDED_PHASES = ("finished", "cancelled")


def table_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:table"


def stats_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:stats"


def settings_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:settings"


def user_key(user_id: int) -> str:
    return f"durak:user:{{{user_id}}}"


def user_stats_key(user_id: int) -> str:
    return f"durak:user:{{{user_id}}}:stats"


TIMERS_KEY = "durak:{timers}:due"
RUNNING_KEY = "durak:{timers}:running"


class StorageConflict(RuntimeError):
    """The same record kept changing under us; give up rather than spin."""


@dataclass
class StatDelta:
    """Counts to add for one human at the end of a game."""

    user_id: int
    name: str
    played: int = 1
    durak: int = 0
    first: int = 0


@dataclass
class Write(Generic[T]):
    """What a change function decided: the table to store (None: store nothing)."""

    table: Table | None
    value: T
    stats: list[StatDelta] = field(default_factory=list)


class Storage:
    """All Redis access of the bot goes through here."""

    def __init__(self, redis: Redis, *, finished_ttl: int, idle_ttl: int) -> None:
        self.redis = redis
        self.finished_ttl = finished_ttl
        self.idle_ttl = idle_ttl

    # --- tables -------------------------------------------------------------------

    async def load_table(self, chat_id: int) -> Table | None:
        raw = await self.redis.get(table_key(chat_id))
        return _parse_table(raw)

    async def update_table(self, chat_id: int, change: Callable[[Table | None], Write[T]]) -> T:
        """Run ``change`` on the current table and store its result atomically.

        ``change`` may run more than once (after a conflict), so it must be pure.
        """
        key = table_key(chat_id)
        for _ in range(MAX_RETRIES):
            async with self.redis.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key)
                    current = _parse_table(await pipe.get(key))
                    # Read before ``change``: flow operations change the record in place.
                    before = current.phase if current is not None else None
                    write = change(current)
                    if write.table is None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return write.value
                    pipe.multi()  # type: ignore[no-untyped-call]
                    ttl = self.finished_ttl if write.table.phase in ENDED_PHASES else self.idle_ttl
                    pipe.set(key, write.table.to_json(), ex=ttl)
                    for delta in write.stats:
                        _add_stats(pipe, stats_key(chat_id), delta)
                    await pipe.execute()
                except WatchError:
                    continue
            await self._after_write(write, phase_changed=before != write.table.phase)
            return write.value
        raise StorageConflict(f"table of chat {chat_id} kept changing")

    async def _after_write(self, write: Write[Any], *, phase_changed: bool) -> None:
        """Keys in other cluster slots: user totals, the index of running games."""
        table = write.table
        assert table is not None
        for delta in write.stats:
            async with self.redis.pipeline(transaction=True) as pipe:
                _add_stats(pipe, user_stats_key(delta.user_id), delta)
                await pipe.execute()
        if not phase_changed:
            return
        if table.phase == "playing":
            await self.redis.sadd(RUNNING_KEY, str(table.chat_id))
        else:
            await self.redis.srem(RUNNING_KEY, str(table.chat_id))
            await self.redis.zrem(TIMERS_KEY, str(table.chat_id))

    async def running_chats(self) -> list[int]:
        return [int(m) for m in await self.redis.smembers(RUNNING_KEY)]

    # --- timers -------------------------------------------------------------------

    async def set_timer(self, chat_id: int, due: float) -> None:
        await self.redis.zadd(TIMERS_KEY, {str(chat_id): due})

    async def next_due(self) -> float | None:
        first = await self.redis.zrange(TIMERS_KEY, 0, 0, withscores=True)
        return float(first[0][1]) if first else None

    async def claim_due(self, now: float, limit: int = 100) -> list[int]:
        """Due timers this process won: ZREM returns 1 for exactly one claimant."""
        members = await self.redis.zrangebyscore(TIMERS_KEY, "-inf", now, start=0, num=limit)
        claimed = []
        for member in members:
            assert isinstance(member, bytes | str)
            if await self.redis.zrem(TIMERS_KEY, member):
                claimed.append(int(member))
        return claimed

    # --- chat settings, users, stats ---------------------------------------------

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        raw = await self.redis.get(settings_key(chat_id))
        return _parse(ChatSettings, raw) or ChatSettings()

    async def save_chat_settings(self, chat_id: int, settings: ChatSettings) -> None:
        await self.redis.set(settings_key(chat_id), settings.model_dump_json(by_alias=True))

    async def init_chat_lang(self, chat_id: int, lang: str) -> str:
        """The chat's language; the first caller's language when it has none yet."""
        key = settings_key(chat_id)
        fresh = ChatSettings(lang=lang).model_dump_json(by_alias=True)
        if await self.redis.set(key, fresh, nx=True):
            return lang
        current = await self.chat_settings(chat_id)
        return current.lang or lang

    async def user(self, user_id: int) -> UserRecord:
        raw = await self.redis.get(user_key(user_id))
        return _parse(UserRecord, raw) or UserRecord()

    async def save_user(self, user_id: int, record: UserRecord) -> None:
        await self.redis.set(user_key(user_id), record.model_dump_json(by_alias=True))

    async def chat_stats(self, chat_id: int) -> list[StatLine]:
        return _stat_lines(await self.redis.hgetall(stats_key(chat_id)))

    async def user_stats(self, user_id: int) -> StatLine:
        lines = _stat_lines(await self.redis.hgetall(user_stats_key(user_id)))
        return lines[0] if lines else StatLine(user_id=user_id)


def _add_stats(pipe: Any, key: str, delta: StatDelta) -> None:
    uid = delta.user_id
    pipe.hset(key, f"{uid}:name", delta.name)
    pipe.hincrby(key, f"{uid}:played", delta.played)
    pipe.hincrby(key, f"{uid}:durak", delta.durak)
    pipe.hincrby(key, f"{uid}:first", delta.first)


def _stat_lines(raw: dict[Any, Any]) -> list[StatLine]:
    lines: dict[int, StatLine] = {}
    for key, value in raw.items():
        k = key.decode() if isinstance(key, bytes) else str(key)
        v = value.decode() if isinstance(value, bytes) else str(value)
        uid_text, _, name = k.partition(":")
        try:
            uid = int(uid_text)
        except ValueError:
            continue
        line = lines.setdefault(uid, StatLine(user_id=uid))
        if name == "name":
            line.name = v
        elif name in ("played", "durak", "first"):
            setattr(line, name, int(v))
    return list(lines.values())


def _parse_table(raw: bytes | str | None) -> Table | None:
    return _parse(Table, raw)


M = TypeVar("M", Table, ChatSettings, UserRecord)


def _parse(model: type[M], raw: bytes | str | None) -> M | None:
    if raw is None:
        return None
    try:
        return model.model_validate_json(raw)
    except ValidationError:
        log.exception("unreadable %s record; treating it as absent", model.__name__)
        return None
