"""``Storage``: the one door to Redis that the rest of the bot uses.

A method about a game takes its ``Place`` (the chat, or one forum topic of it); one about
the group itself (its settings, totals, leaderboards, a move to a supergroup) takes its
``chat_id`` (``bot.store.keys`` says which keys are which).

Each concern is a repository of its own (``games``, ``output``, ``screens``, ``timers``,
``stats``, ``ratings``, ``preferences``, ``migration``); this façade builds them over one
connection and keeps the methods callers know. A move's record, owed output, pending stats
and pending rating are still written in one MULTI: ``GameRecords.update`` hands its
pipeline to the others.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio import Redis

from bot.domain.place import Place
from bot.domain.rating import RatingRecord, ResultLine
from bot.domain.records import (
    ChatGame,
    ChatSettings,
    LeaderboardLine,
    RatingHistoryEntry,
    StatDelta,
    StatLine,
    UserRecord,
)
from bot.domain.roles import Role
from bot.store.conditional import ConditionalWrites
from bot.store.games import GameRecords, Quarantined
from bot.store.keys import (
    RUNNING_KEY,
    SHARDS,
    TIMERS_KEY,
    output_index_key,
    output_key,
    running_key,
    settings_key,
    shard_of,
    stats_key,
    table_key,
    timers_key,
    user_key,
)
from bot.store.migration import ChatMigration
from bot.store.output import OUTPUT_LEASE, OwedOutputs
from bot.store.owed import Owed, OwedOutput, Reowe, owed_of
from bot.store.preferences import Preferences
from bot.store.rating_codec import season_at
from bot.store.ratings import GameRatings, RatingBoards
from bot.store.screens import HandShown, Screen, ScreenBusy, Screens
from bot.store.stats import SETTLE_EVERY, GameStats
from bot.store.tidy import Tidying
from bot.store.timers import TIMER_LEASE, RunningGames, Timers
from bot.store.transactions import Lifetimes, StorageConflict, Transactions
from bot.store.write import Write

T = TypeVar("T")
AfterCommit = Callable[[Place], Awaitable[object]]
"""Awaited with a game's place after its table was written."""


class Storage:
    """All Redis access of the bot goes through here."""

    def __init__(
        self,
        redis: Redis,
        *,
        finished_ttl: int,
        idle_ttl: int,
        settings_ttl: int = 180 * 24 * 3600,
        output_lease: float = OUTPUT_LEASE,
        on_quarantine: Quarantined | None = None,
        after_commit: AfterCommit | None = None,
    ) -> None:
        """``on_quarantine``: told (place, game id) after an unreadable table was moved
        aside; ``after_commit``: awaited with the place after each table write
        (``bot.store.replica_wait``: Redis WAIT)."""
        self.redis = redis
        self.output_lease = output_lease
        self.output_sweep_every = min(1.0, output_lease / 4)
        self.send_claim_ms = int(2000 * output_lease)
        """How long one worker alone may edit or send a message: a send slower than this
        (Telegram answering very late) is the one case where two workers may both send."""
        self.finished_ttl = finished_ttl
        self.idle_ttl = idle_ttl
        self.settings_ttl = settings_ttl
        """Group settings and user records expire this long after their last use."""
        self.on_quarantine = on_quarantine
        self.after_commit = after_commit
        db = Transactions(redis)
        lives = Lifetimes(finished=finished_ttl, idle=idle_ttl, settings=settings_ttl)
        conditional = ConditionalWrites(redis, db.transaction)  # one: it learns "no Lua" once
        self._output = OwedOutputs(db, conditional, lives, lease_seconds=output_lease)
        self._stats = GameStats(db, lives)
        self._boards = RatingBoards(db, conditional)
        self._ratings = GameRatings(db, lives, self._boards)
        self._timers = Timers(db, conditional)
        self._running = RunningGames(db, self._timers)
        self._games = GameRecords(
            db,
            lives,
            output=self._output,
            stats=self._stats,
            ratings=self._ratings,
            running=self._running,
            quarantined=self._quarantined,
        )
        self._screens = Screens(db, conditional, lives, claim_ms=self.send_claim_ms)
        self._migration = ChatMigration(db, lives, timers=self._timers, running=self._running)
        self._preferences = Preferences(db, lives)
        self.tidy = Tidying(db, conditional)
        """Tidy-up's deletes and what games leave in their chats (``bot.store.tidy``)."""

    def _quarantined(self, place: Place, game_id: str) -> None:
        if self.on_quarantine is not None:
            self.on_quarantine(place, game_id)

    # --- a place's game ------------------------------------------------------------

    async def load_table(self, place: Place) -> ChatGame | None:
        """The place's game (following a group that became a supergroup), to change."""
        return await self._games.load(place)

    async def peek_table(self, place: Place) -> ChatGame | None:
        """Like ``load_table``, for readers that only look (a shared parsed copy)."""
        return await self._shared_table(place, await self.redis.get(table_key(place)))

    async def _shared_table(self, place: Place, raw: bytes | str | None) -> ChatGame | None:
        if raw is None:  # none, or the group became a supergroup: the careful way
            return await self.load_table(place)
        return await self._games.shared(place, raw)

    async def moved_to(self, chat_id: int) -> int | None:
        """The chat a group that became a supergroup lives in now (all its places)."""
        return await self._games.moved_to(chat_id)

    async def update_table(self, place: Place, change: Callable[[ChatGame | None], Write[T]]) -> T:
        """Run ``change`` on the current table and store its result atomically.

        ``change`` may run more than once (after a conflict), so it must be pure.
        """
        committed = await self._games.update(place, change)
        write = committed.write
        if committed.place is not None:
            if self.after_commit is not None:
                await self.after_commit(committed.place)
            await self._after_write(write, phase_changed=committed.phase_changed)
        return write.value

    async def _after_write(self, write: Write[Any], *, phase_changed: bool) -> None:
        """Keys in other cluster slots: user totals, the index of running games."""
        table = write.table
        assert table is not None
        if write.stats:
            await self.settle_game_stats(table.place, table.game_id)
        if phase_changed:
            await self._running.follow(table.place, table.phase)

    async def running_places(self) -> list[Place]:
        """The places whose game is being played."""
        return await self._running.places()

    async def migrate_chat(self, old: int, new: int) -> ChatGame | None:
        """Move a group's game, statistics and settings to its new (supergroup) id (each
        place to ``Place.in_chat(new)``); returns the moved table. Safe to call twice
        (the second does nothing)."""
        return await self._migration.migrate(old, new)

    async def claim_lost_notice(self, place: Place, game_id: str) -> bool:
        """True for exactly one caller: the one who tells the group its game was lost."""
        return await self._games.lost_notice_once(place, game_id)

    # --- what is on screen ------------------------------------------------------------

    async def open_screen(
        self, place: Place, role: Role
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        """Take the edit claim of the game's ``role`` message and read, at one moment, the
        game's owed output, its record and what that message shows (``Screens.read``).
        ``ScreenBusy`` if another worker holds the claim; ``close_screen`` ends it."""
        return await self._read_screen(place, role, claim=True)

    async def peek_screen(
        self, place: Place, role: Role
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        """Like ``open_screen``, without the claim: to see whether there is anything to do.
        A message some worker may be changing right now reads as unknown."""
        return await self._read_screen(place, role, claim=False)

    async def _read_screen(
        self, place: Place, role: Role, *, claim: bool
    ) -> tuple[OwedOutput, ChatGame | None, Screen]:
        owed_raw, raw, screen = await self._screens.read(place, role, claim=claim)
        return owed_of(owed_raw), await self._shared_table(place, raw), screen

    async def note_sent(self, screen: Screen, message_id: int) -> None:
        """A new message went out in ``screen``'s role: its id, kept until the record holds
        it, so that a worker dying in between leaves it to the next refresh to delete."""
        await self._screens.note_sent(screen, message_id)

    async def close_screen(self, place: Place, screen: Screen) -> None:
        """What the message shows now (if that changed), and its edit claim ended."""
        await self._screens.close(place, screen)

    async def screen(self, place: Place, role: Role) -> Screen | None:
        """What the game's ``role`` message shows; None while a worker is changing it."""
        return await self._screens.shown(place, role)

    async def claim_send(self, to: Place, slot: str) -> bool:
        """True for one worker at a time: the one that may send ``slot``'s new message
        (a hand that notifies, a first table message) to ``to`` until ``release_send``."""
        return await self._screens.claim_send(to, slot)

    async def release_send(self, to: Place, slot: str) -> None:
        await self._screens.release_send(to, slot)

    async def mark_hand_shown(
        self, place: Place, user_id: int, game_id: str, step: int, at: float
    ) -> None:
        """Remember when the hand for ``step`` first landed (a later refresh of the same
        step, e.g. after a restart, keeps the first time)."""
        await self._screens.mark_hand_shown(place, user_id, game_id, step, at)

    async def hands_shown(self, place: Place) -> dict[int, HandShown]:
        return await self._screens.hands_shown(place)

    # --- owed output: what committed moves still have to show -------------------------

    async def owed_output(self, place: Place) -> OwedOutput:
        return await self._output.read(place)

    async def owed_note(self, place: Place, note_id: str) -> dict[str, Any] | None:
        return await self._output.note(place, note_id)

    async def settle_output(self, place: Place, fields: dict[str, int | None]) -> bool:
        """Clear the owed ``fields`` that ask for at most the given revision (None: any);
        true when the place then owes nothing."""
        return await self._output.settle(place, fields)

    async def release_output(self, place: Place) -> None:
        """This process showed everything the place owed: its lease ends."""
        await self._output.release(place)

    async def renew_output_leases(self, now: float, places: set[Place]) -> None:
        """Extend the leases this process holds for ``places`` (still sending)."""
        await self._output.renew(now, places)

    async def claim_owed_output(
        self, now: float, limit: int = 50
    ) -> list[tuple[Place, OwedOutput]]:
        """Owed output whose lease ran out (its worker died or gave it back), leased to
        this process now (see ``OwedOutputs.sweep``)."""
        return await self._output.sweep(now, limit)

    async def hand_back_output(self) -> None:
        """At shutdown: what this process still owes becomes due now for another worker."""
        await self._output.hand_back()

    # --- timers -------------------------------------------------------------------------

    async def set_timer(self, place: Place, due: float) -> None:
        await self._timers.set(place, due)

    async def timers_due_by(self, until: float, limit: int = 100) -> list[tuple[float, Place, str]]:
        """Timers due by ``until`` (at most ``limit`` per shard): (due, place, key)."""
        return await self._timers.due_by(until, limit)

    async def claim_timer(self, place: Place, key: str, now: float) -> bool:
        """Lease the game's timer in ``key`` if it is due by ``now``, for exactly one
        claimant, until ``release_timer`` (or ``TIMER_LEASE``, should its worker die)."""
        return await self._timers.lease(place, key, now)

    async def release_timer(self, place: Place) -> None:
        """The timer's work is done: drop it unless a new due time replaced the lease."""
        await self._timers.release(place)

    # --- statistics ---------------------------------------------------------------------

    async def settle_game_stats(self, place: Place, game_id: str) -> None:
        """Add a finished game to each human's totals and rate it, once per user and game;
        the game stays indexed for the periodic settling until both are done."""
        await self._stats.settle_game(place, game_id)
        await self._ratings.settle_game(place, game_id)
        await self._stats.unindex(place, game_id)

    async def settle_pending_stats(self, now: float) -> int:
        """Settle what a worker that died after a game's end left: games looked at."""
        return await self._stats.settle_pending(now, self.settle_game_stats)

    async def chat_stats(self, chat_id: int) -> list[StatLine]:
        return await self._stats.chat_stats(chat_id)

    async def user_stats(self, user_id: int) -> StatLine:
        return await self._stats.user_stats(user_id)

    # --- ratings ------------------------------------------------------------------------

    async def rating_lines(
        self, place: Place, game_id: str, *, overall: bool = False
    ) -> dict[int, ResultLine]:
        """Each rated player's result line of the game, by user id (the group's season,
        or ``overall``); empty when it was not rated (or is not yet)."""
        return await self._ratings.result_lines(place, game_id, overall=overall)

    async def top(
        self, chat_id: int | None, season: str, min_games: int, limit: int
    ) -> list[LeaderboardLine]:
        """A season's leaderboard: the group's, or over all groups (``chat_id`` None)."""
        return await self._boards.top(chat_id, season, min_games, limit)

    async def user_rating(self, user_id: int, chat_id: int | None, season: str) -> RatingRecord:
        """A user's rating in a group's season (or overall); a newcomer's if none."""
        return await self._boards.user_rating(user_id, chat_id, season)

    async def rating_history(self, user_id: int, limit: int) -> list[RatingHistoryEntry]:
        """The user's latest rated games, newest first."""
        return await self._boards.history(user_id, limit)

    # --- chat settings, users, languages ------------------------------------------------

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        return await self._preferences.chat_settings(chat_id)

    async def save_chat_settings(self, chat_id: int, settings: ChatSettings) -> None:
        await self._preferences.save_chat_settings(chat_id, settings)

    async def chat_language(self, chat_id: int) -> str | None:
        """The group's language, as ``chat_settings`` says (cached briefly)."""
        return await self._preferences.language(settings_key(chat_id), self.chat_settings, chat_id)

    async def user_language(self, user_id: int) -> str | None:
        """The language a user chose with /language, if any (cached briefly)."""
        return await self._preferences.language(user_key(user_id), self.user, user_id)

    async def init_chat_lang(self, chat_id: int, lang: str) -> str:
        """The chat's language; the first caller's language when it has none yet."""
        if await self._preferences.init_chat_lang(chat_id, lang):
            return lang
        current = await self.chat_settings(chat_id)
        return current.lang or lang

    async def user(self, user_id: int) -> UserRecord:
        return await self._preferences.user(user_id)

    async def save_user(self, user_id: int, record: UserRecord) -> None:
        await self._preferences.save_user(user_id, record)


# Re-exports, for callers not yet moved to the modules these now live in.

__all__ = [
    "OUTPUT_LEASE",
    "RUNNING_KEY",
    "SETTLE_EVERY",
    "SHARDS",
    "TIMERS_KEY",
    "TIMER_LEASE",
    "HandShown",
    "Owed",
    "OwedOutput",
    "Reowe",
    "Screen",
    "ScreenBusy",
    "StatDelta",
    "Storage",
    "StorageConflict",
    "Write",
    "output_index_key",
    "output_key",
    "running_key",
    "season_at",
    "settings_key",
    "shard_of",
    "stats_key",
    "table_key",
    "timers_key",
    "user_key",
]
