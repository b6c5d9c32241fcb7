"""Owed output: what committed moves still have to show, and who is showing it.

A move's owed output is written in the move's transaction (``stage`` reads inside its
WATCH, ``write`` adds to its MULTI). A chat that owes anything is in the owed-output
index, scored with the end of the lease of the worker showing it: the worker renews it
while it sends, and hands it back when done; a lease that ran out (its worker died) is
taken over by another worker's sweep.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import WatchError

from bot.store import owed_fields
from bot.store.conditional import ConditionalWrites, as_text
from bot.store.keys import ALL_OUTPUT_INDEX_KEYS, output_index_key, output_key, shard_of
from bot.store.owed import Owed, OwedOutput, note_of, owed_of
from bot.store.transactions import Lifetimes, StorageConflict, Transactions
from bot.store.write import Write

OUTPUT_LEASE = 10.0
"""Default seconds a worker holds a chat's owed output before another worker's sweeper
takes it over (``Settings.output_lease``). The holder renews it while it is still
sending, so only a dead (or frozen) worker loses it."""


@dataclass
class OwedChanges:
    """The owed-output hash's changes for one move, staged inside its WATCH."""

    new: dict[Any, Any] = field(default_factory=dict)
    """Field -> value (str); typed loosely for redis-py's invariant mapping type."""
    stale: list[str] = field(default_factory=list)
    counted: bool = False
    """A move: counted in ``OwedOutputs.committing`` until its transaction is over."""


class OwedOutputs:
    """The owed-output hashes and their index of leases."""

    def __init__(
        self,
        db: Transactions,
        conditional: ConditionalWrites,
        lives: Lifetimes,
        *,
        lease_seconds: float,
    ) -> None:
        self._db = db
        self._conditional = conditional
        self._lives = lives
        self.lease_seconds = lease_seconds
        self.sweep_every = min(1.0, lease_seconds / 4)
        self._held: dict[int, float] = {}
        """Chats whose owed output this process holds: chat id -> the lease it wrote."""
        self._committing: dict[int, int] = {}
        """Moves of this process between their index entry and their commit, per chat."""
        self._next_sweep = 0.0

    # --- inside a move's transaction ----------------------------------------------

    async def stage(self, pipe: Any, chat_id: int, write: Write[Any]) -> OwedChanges:
        """The output hash's changes for ``write`` (read inside its WATCH). A move is
        indexed first (another slot), so a crash after its commit leaves it findable."""
        changes = OwedChanges(stale=await self._settled(pipe, chat_id, write.settle))
        if write.retire is not None:
            changes.new[owed_fields.delete(*write.retire)] = "1"
        if write.reowe is not None:
            current = int(await pipe.hget(output_key(chat_id), owed_fields.REV) or 0)
            write.reowe.newer = current > write.reowe.seen
            if write.reowe.newer:
                changes.new.update({owed_fields.owe(t): str(current) for t in write.reowe.targets})
        if write.output is not None:
            await self._owe(pipe, chat_id, write.output, changes)
        return changes

    async def _settled(self, pipe: Any, chat_id: int, settle: dict[str, int | None]) -> list[str]:
        """The fields of ``settle`` that ask for at most their bound (None: any)."""
        if not settle:
            return []
        names = list(settle)
        stale = []
        for name, value in zip(names, await pipe.hmget(output_key(chat_id), names), strict=True):
            bound = settle[name]
            if value is not None and (bound is None or int(value) <= bound):
                stale.append(name)
        return stale

    async def _owe(self, pipe: Any, chat_id: int, owed: Owed, changes: OwedChanges) -> None:
        """A move's output: the next revision, owed by each of its targets, and the lease
        of this process on showing it."""
        rev = int(await pipe.hget(output_key(chat_id), owed_fields.REV) or 0) + 1
        self._committing[chat_id] = self._committing.get(chat_id, 0) + 1
        changes.counted = True
        lease = time.time() + self.lease_seconds
        await self._db.aside(pipe).zadd(output_index_key(shard_of(chat_id)), {str(chat_id): lease})
        self._held[chat_id] = lease
        owed.rev = rev
        owed.note_ids = [f"{rev:010d}.{i:03d}" for i in range(len(owed.notes))]
        changes.new[owed_fields.REV] = str(rev)
        for target in owed.targets:
            changes.new[owed_fields.owe(target)] = str(rev)
        for user in owed.notify:
            changes.new[owed_fields.notify(user)] = str(rev)
        for note_id, note in zip(owed.note_ids, owed.notes, strict=True):
            changes.new[owed_fields.note(note_id)] = json.dumps(note, default=str)
        changes.stale = [name for name in changes.stale if name not in changes.new]

    def write(self, pipe: Any, chat_id: int, changes: OwedChanges) -> None:
        """Add the staged changes to the move's MULTI."""
        if changes.stale:
            pipe.hdel(output_key(chat_id), *changes.stale)
        if changes.new:
            pipe.hset(output_key(chat_id), mapping=changes.new)
            pipe.expire(output_key(chat_id), self._lives.idle)

    def move_done(self, chat_id: int) -> None:
        """A move's transaction is over (committed or not): its count ends."""
        left = self._committing.get(chat_id, 0) - 1
        if left > 0:
            self._committing[chat_id] = left
        else:
            self._committing.pop(chat_id, None)

    # --- reading and settling ---------------------------------------------------------

    async def read(self, chat_id: int) -> OwedOutput:
        return owed_of(await self._db.redis.hgetall(output_key(chat_id)))

    async def note(self, chat_id: int, note_id: str) -> dict[str, Any] | None:
        raw = await self._db.redis.hget(output_key(chat_id), owed_fields.note(note_id))
        return None if raw is None else note_of(raw)

    async def settle(self, chat_id: int, fields: dict[str, int | None]) -> bool:
        """Clear the owed ``fields`` that ask for at most the given revision (None: any);
        true when the chat then owes nothing."""
        try:
            left = await self._conditional.settle(output_key(chat_id), fields)
        except WatchError:
            raise StorageConflict(f"output of chat {chat_id} kept changing") from None
        return owed_of(left).complete

    # --- leases -----------------------------------------------------------------------

    async def release(self, chat_id: int) -> None:
        """This process showed everything the chat owed: drop its index entry, unless a
        newer move (ours, mid-commit, or another worker's, which writes a new lease) owes
        more."""
        if self._committing.get(chat_id):
            return
        held = self._held.pop(chat_id, None)
        if held is not None:
            await self._conditional.drop_if(output_index_key(shard_of(chat_id)), str(chat_id), held)

    async def renew(self, now: float, chats: set[int]) -> None:
        """Extend the leases this process holds for ``chats`` (still sending) when half
        of one is gone; a lease that someone else took over, or that ran out while this
        process had nothing left to send for it (a sweeper's now), is forgotten."""
        for chat_id, until in list(self._held.items()):
            if until < now and chat_id not in chats and not self._committing.get(chat_id):
                del self._held[chat_id]
        for chat_id in chats:
            held = self._held.get(chat_id)
            if held is None or held - now > self.lease_seconds / 2:
                continue
            key, lease = output_index_key(shard_of(chat_id)), now + self.lease_seconds
            if await self._conditional.move_if(key, str(chat_id), held, lease):
                self._held[chat_id] = lease
            elif self._held.get(chat_id) == held:
                del self._held[chat_id]

    async def sweep(self, now: float, limit: int) -> list[tuple[int, OwedOutput]]:
        """Owed output whose lease ran out (its worker died or gave it back), leased to
        this process now; at most every ``sweep_every`` seconds. Entries that owe
        nothing any more are dropped."""
        if now < self._next_sweep:
            return []
        self._next_sweep = now + self.sweep_every
        leased = []
        due = await self._db.read_each(
            ALL_OUTPUT_INDEX_KEYS,
            lambda client, key: client.zrangebyscore(key, "-inf", now, start=0, num=limit),
        )
        for key, members in zip(ALL_OUTPUT_INDEX_KEYS, due, strict=True):
            for member in members:
                name = as_text(member)
                lease = now + self.lease_seconds
                if not await self._conditional.lease_due(key, name, now, lease):
                    continue  # another sweeper was first
                chat_id = int(name)
                self._held[chat_id] = lease
                owed = await self.read(chat_id)
                if owed.complete:
                    await self.release(chat_id)
                else:
                    leased.append((chat_id, owed))
        return leased

    async def hand_back(self) -> None:
        """At shutdown: what this process still owes becomes due now for another worker."""
        for chat_id, held in list(self._held.items()):
            key = output_index_key(shard_of(chat_id))
            await self._conditional.move_if(key, str(chat_id), held, 0.0)
        self._held.clear()
