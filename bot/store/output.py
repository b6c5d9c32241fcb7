"""Owed output: what committed moves still have to show, and who is showing it.

A move's owed output is written in the move's transaction (``stage`` reads inside its
WATCH, ``write`` adds to its MULTI). A game's place that owes anything is in the
owed-output index (its ``Place.text``), scored with the end of the lease of the worker
showing it: the worker renews it while it sends, and hands it back when done; a lease
that ran out (its worker died) is taken over by another worker's sweep.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import WatchError

from bot.domain.place import Place
from bot.store import owed_fields
from bot.store.conditional import ConditionalWrites, as_text
from bot.store.keys import ALL_OUTPUT_INDEX_KEYS, output_index_key, output_key, place_shard
from bot.store.owed import Owed, OwedOutput, note_of, owed_of
from bot.store.transactions import Lifetimes, StorageConflict, Transactions
from bot.store.write import Write

OUTPUT_LEASE = 10.0
"""Default seconds a worker holds a game's owed output before another worker's sweeper
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
        self._held: dict[Place, float] = {}
        """Places whose owed output this process holds: place -> the lease it wrote."""
        self._committing: dict[Place, int] = {}
        """Moves of this process between their index entry and their commit, per place."""
        self._next_sweep = 0.0

    # --- inside a move's transaction ----------------------------------------------

    async def stage(self, pipe: Any, place: Place, write: Write[Any]) -> OwedChanges:
        """The output hash's changes for ``write`` (read inside its WATCH). A move is
        indexed first (another slot), so a crash after its commit leaves it findable."""
        changes = OwedChanges(stale=await self._settled(pipe, place, write.settle))
        if write.retire is not None:
            changes.new[owed_fields.delete(*write.retire)] = "1"
        if write.reowe is not None:
            current = int(await pipe.hget(output_key(place), owed_fields.REV) or 0)
            write.reowe.newer = current > write.reowe.seen
            if write.reowe.newer:
                changes.new.update({owed_fields.owe(t): str(current) for t in write.reowe.targets})
        if write.output is not None:
            await self._owe(pipe, place, write.output, changes)
        return changes

    async def _settled(self, pipe: Any, place: Place, settle: dict[str, int | None]) -> list[str]:
        """The fields of ``settle`` that ask for at most their bound (None: any)."""
        if not settle:
            return []
        names = list(settle)
        stale = []
        for name, value in zip(names, await pipe.hmget(output_key(place), names), strict=True):
            bound = settle[name]
            if value is not None and (bound is None or int(value) <= bound):
                stale.append(name)
        return stale

    async def _owe(self, pipe: Any, place: Place, owed: Owed, changes: OwedChanges) -> None:
        """A move's output: the next revision, owed by each of its targets, and the lease
        of this process on showing it."""
        rev = int(await pipe.hget(output_key(place), owed_fields.REV) or 0) + 1
        self._committing[place] = self._committing.get(place, 0) + 1
        changes.counted = True
        lease = time.time() + self.lease_seconds
        await self._db.aside(pipe).zadd(output_index_key(place_shard(place)), {place.text: lease})
        self._held[place] = lease
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

    def write(self, pipe: Any, place: Place, changes: OwedChanges) -> None:
        """Add the staged changes to the move's MULTI."""
        if changes.stale:
            pipe.hdel(output_key(place), *changes.stale)
        if changes.new:
            pipe.hset(output_key(place), mapping=changes.new)
            pipe.expire(output_key(place), self._lives.idle)

    def move_done(self, place: Place) -> None:
        """A move's transaction is over (committed or not): its count ends."""
        left = self._committing.get(place, 0) - 1
        if left > 0:
            self._committing[place] = left
        else:
            self._committing.pop(place, None)

    # --- reading and settling ---------------------------------------------------------

    async def read(self, place: Place) -> OwedOutput:
        return owed_of(await self._db.redis.hgetall(output_key(place)))

    async def note(self, place: Place, note_id: str) -> dict[str, Any] | None:
        raw = await self._db.redis.hget(output_key(place), owed_fields.note(note_id))
        return None if raw is None else note_of(raw)

    async def settle(self, place: Place, fields: dict[str, int | None]) -> bool:
        """Clear the owed ``fields`` that ask for at most the given revision (None: any);
        true when the place then owes nothing."""
        try:
            left = await self._conditional.settle(output_key(place), fields)
        except WatchError:
            raise StorageConflict(f"output of {place} kept changing") from None
        return owed_of(left).complete

    # --- leases -----------------------------------------------------------------------

    async def release(self, place: Place) -> None:
        """This process showed everything the place owed: drop its index entry, unless a
        newer move (ours, mid-commit, or another worker's, which writes a new lease) owes
        more."""
        if self._committing.get(place):
            return
        held = self._held.pop(place, None)
        if held is not None:
            await self._conditional.drop_if(output_index_key(place_shard(place)), place.text, held)

    async def renew(self, now: float, places: set[Place]) -> None:
        """Extend the leases this process holds for ``places`` (still sending) when half
        of one is gone; a lease that someone else took over, or that ran out while this
        process had nothing left to send for it (a sweeper's now), is forgotten."""
        for place, until in list(self._held.items()):
            if until < now and place not in places and not self._committing.get(place):
                del self._held[place]
        for place in places:
            held = self._held.get(place)
            if held is None or held - now > self.lease_seconds / 2:
                continue
            key, lease = output_index_key(place_shard(place)), now + self.lease_seconds
            if await self._conditional.move_if(key, place.text, held, lease):
                self._held[place] = lease
            elif self._held.get(place) == held:
                del self._held[place]

    async def sweep(self, now: float, limit: int) -> list[tuple[Place, OwedOutput]]:
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
                place = Place.parse(name)
                self._held[place] = lease
                owed = await self.read(place)
                if owed.complete:
                    await self.release(place)
                else:
                    leased.append((place, owed))
        return leased

    async def hand_back(self) -> None:
        """At shutdown: what this process still owes becomes due now for another worker."""
        for place, held in list(self._held.items()):
            key = output_index_key(place_shard(place))
            await self._conditional.move_if(key, place.text, held, 0.0)
        self._held.clear()
