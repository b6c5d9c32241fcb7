"""What each message of a game shows, and the claims of the workers changing it.

One worker at a time may change a message: it takes the message's edit claim (or, for a
new message, its send claim), each ending by itself after ``claim_ms`` should its worker
die. The screen record (``screen_key``) says what the message shows, fleet-wide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.domain.place import Place
from bot.domain.roles import Role
from bot.store.conditional import ConditionalWrites, as_text
from bot.store.keys import (
    edit_claim_key,
    output_key,
    screen_key,
    send_claim_key,
    shown_key,
    table_key,
)
from bot.store.transactions import Lifetimes, Transactions


class ScreenBusy(Exception):
    """Another worker is refreshing this message right now: read again after it."""


@dataclass(frozen=True)
class HandShown:
    game_id: str
    step: int
    at: float
    """Wall-clock time the hand for ``step`` was confirmed on screen."""


@dataclass
class Screen:
    """What one message shows, as the whole fleet knows it (``screen_key``).

    Every worker's refresh of a message reads the record and this under the message's
    edit claim, and writes this back before the claim ends. So no worker skips an edit
    because of what it alone showed last (another may have edited the message since), and
    no edit of an older record lands after a newer one."""

    place: Place
    """The game's place (whose record the message shows)."""
    role: Role
    message_id: int | None = None
    digest: str | None = None
    unstored: int | None = None
    """A new message sent in this role whose id the record may lack: its worker died (or
    Redis failed) between Telegram's answer and storing it (``Storage.note_sent``)."""
    changed: bool = False
    """Differs from what Redis holds (``close_screen`` writes it then)."""
    noted: bool = False
    """An id was noted as sent (``unstored``) in Redis, by this job or a dead one."""
    claimed: bool = False
    """Read under the message's edit claim (``Storage.open_screen``): this worker alone
    may change the message now; else only looked at (``Storage.peek_screen``)."""

    def shows(self, message_id: int | None, digest: str) -> bool:
        return message_id is not None and (self.message_id, self.digest) == (message_id, digest)

    def now_shows(self, message_id: int | None, digest: str | None) -> None:
        if (self.message_id, self.digest) != (message_id, digest):
            self.message_id, self.digest, self.changed = message_id, digest, True

    def unknown(self) -> None:
        """An edit that timed out may still land: whoever is next edits, whatever it shows."""
        self.now_shows(None, None)


def _open_field(role: Role) -> str:
    """Set with the edit claim, deleted with its end: found without the claim, its
    holder died, maybe with an edit on its way."""
    return f"open:{role}"


def _sent_field(role: Role) -> str:
    return f"sent:{role}"


def _screen_read(place: Place, role: Role, fields: list[Any]) -> Screen:
    """The screen from its record, its open field and its noted send (``screen_key``)."""
    shown, left_open, sent = fields
    screen = _screen_of(place, role, shown)
    if left_open:
        screen.unknown()
    if sent is not None:
        screen.unstored, screen.noted = int(as_text(sent)), True
    return screen


def _screen_of(place: Place, role: Role, raw: bytes | str | None) -> Screen:
    if raw is None:
        return Screen(place, role)
    message_id, _, digest = as_text(raw).partition(":")
    return Screen(place, role, int(message_id), digest or None)


class Screens:
    """The screen records, the claims on messages, and when each hand was shown."""

    def __init__(
        self,
        db: Transactions,
        conditional: ConditionalWrites,
        lives: Lifetimes,
        *,
        claim_ms: int,
    ) -> None:
        self._db = db
        self._conditional = conditional
        self._lives = lives
        self.claim_ms = claim_ms
        """How long an edit or send claim lasts unless ended (a dead worker's runs out)."""

    async def read(
        self, place: Place, role: Role, *, claim: bool
    ) -> tuple[dict[Any, Any], bytes | str | None, Screen]:
        """The place's owed output (its hash), its record (raw) and what the ``role``
        message shows, at one moment in one round trip; with ``claim``, under the
        message's edit claim (``ScreenBusy`` if another worker holds it)."""
        screens = screen_key(place)
        async with self._db.transaction(output_key(place)) as pipe:
            if claim:
                pipe.set(edit_claim_key(place, role), "1", nx=True, px=self.claim_ms)
            pipe.hgetall(output_key(place))
            pipe.get(table_key(place))
            pipe.hmget(screens, [role, _open_field(role), _sent_field(role)])
            if claim:
                pipe.hset(screens, _open_field(role), "1")  # the holder's own already, if busy
                pipe.expire(screens, max(self._lives.idle, self._lives.finished))
            answers = await pipe.execute()
        if claim and not answers.pop(0):
            raise ScreenBusy(place, role)
        owed_raw, raw, shown = answers[:3]
        screen = _screen_read(place, role, shown)
        screen.claimed = claim
        return owed_raw, raw, screen

    async def note_sent(self, screen: Screen, message_id: int) -> None:
        screen.unstored, screen.noted = message_id, True
        key = screen_key(screen.place)
        await self._db.redis.hset(key, _sent_field(screen.role), str(message_id))

    async def close(self, place: Place, screen: Screen) -> None:
        """What the message shows now (if that changed), and its edit claim ended."""
        screens = screen_key(place)
        async with self._db.transaction(output_key(place)) as pipe:
            if screen.changed and screen.message_id is not None and screen.digest is not None:
                pipe.hset(screens, screen.role, f"{screen.message_id}:{screen.digest}")
            elif screen.changed:
                pipe.hdel(screens, screen.role)
            done = [_open_field(screen.role)]
            if screen.noted and screen.unstored is None:
                done.append(_sent_field(screen.role))
            pipe.hdel(screens, *done)
            pipe.delete(edit_claim_key(place, screen.role))
            await pipe.execute()

    async def shown(self, place: Place, role: Role) -> Screen | None:
        """What the game's ``role`` message shows; None while a worker is changing it."""
        key = screen_key(place)
        shown, left_open = await self._db.redis.hmget(key, [role, _open_field(role)])
        return None if left_open is not None else _screen_of(place, role, shown)

    async def claim_send(self, to: Place, slot: str) -> bool:
        key = send_claim_key(to, slot)
        return bool(await self._db.redis.set(key, "1", nx=True, px=self.claim_ms))

    async def release_send(self, to: Place, slot: str) -> None:
        await self._db.redis.delete(send_claim_key(to, slot))

    # --- when each hand was first on screen ---------------------------------------

    async def mark_hand_shown(
        self, place: Place, user_id: int, game_id: str, step: int, at: float
    ) -> None:
        prefix = f"{game_id}:{step}:"
        await self._conditional.set_first(
            shown_key(place), str(user_id), prefix, f"{prefix}{at}", self._lives.idle
        )

    async def hands_shown(self, place: Place) -> dict[int, HandShown]:
        shown = {}
        for user, value in (await self._db.redis.hgetall(shown_key(place))).items():
            game_id, step, at = as_text(value).split(":")
            shown[int(user)] = HandShown(game_id, int(step), float(at))
        return shown
