"""Ratings: every finished game with a human rated exactly once, per group and overall.

A game's end leaves the game to rate pending in the move's own transaction
(``pending_rating_key``, next to the pending stats and under the same index entry). Then,
by the worker that ended the game or by any worker's periodic settling:

1. Plan, once: the players' current ratings are read (the group's season, the overall
   season), the game is rated in both scopes, and the plan is stored write-once (SET NX)
   in the game's slot. Whoever loses that race uses the winner's plan, so every worker
   applies the same numbers, and the result lines read them.
2. Apply, once per player: one transaction in the player's slot writes both scopes'
   records, a history entry and the once marker (``rated_key``). A record that changed
   since the plan (a game in another group) gets the plan's change carried over
   (``rating.apply_update``), so neither game is lost.
3. Copy each player's record to the leaderboards (a copy: repeating it is harmless, and a
   copy with fewer games never overwrites one with more), then forget the pending entry.

A crash at any point leaves the pending entry (and the index entry): a later settling
redoes what is missing, and the plan and the markers keep it from doing anything twice.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from redis.exceptions import WatchError

from bot.domain.flow.results import rated_game
from bot.domain.place import Place
from bot.domain.rating import (
    FinishedGame,
    Human,
    RatingRecord,
    RatingUpdate,
    ResultLine,
    apply_update,
    leaderboard,
    placings,
    rate_game,
    result_line,
)
from bot.domain.records import ChatGame, LeaderboardLine, RatingHistoryEntry
from bot.ops import metrics
from bot.store.conditional import MAX_RETRIES, ConditionalWrites, as_text
from bot.store.keys import (
    leaderboard_key,
    leaderboard_players_key,
    pending_rating_key,
    rated_key,
    rating_history_key,
    rating_plan_key,
    settings_key,
    user_rating_key,
)
from bot.store.preferences import read_chat_settings
from bot.store.rating_codec import (
    PendingRating,
    PlannedPlayer,
    RatingPlan,
    pending_from_json,
    pending_to_json,
    plan_from_json,
    plan_to_json,
    record_from_json,
    record_to_json,
    season_at,
)
from bot.store.transactions import Lifetimes, StorageConflict, Transactions

log = logging.getLogger(__name__)

SEASON_KEPT = 400 * 24 * 3600
"""Seconds a season's ratings and leaderboards outlive their last game: past seasons stay
readable for over a year. The history lives as long after its last entry."""
HISTORY_KEPT = 200
"""Rated games a user's history keeps (the newest)."""

# KEYS: the players hash, the leaderboard. ARGV: user id, games, the entry, the rating
# shown, the TTL. A copy with no more games than the one held changes nothing.
COPY_IF_NEWER = """
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then
  local ok, entry = pcall(cjson.decode, held)
  local games = ok and type(entry) == 'table' and tonumber(entry['games'])
  if games and games >= tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return 1
"""


def _read_record(raw: bytes | str | None, where: str) -> RatingRecord:
    """A stored rating record; an unreadable one counts as a newcomer's (logged): the
    game is still rated, rather than lost for every player at the table."""
    try:
        return record_from_json(raw)
    except ValueError:
        log.exception("unreadable rating record at %s; read as a newcomer's", where)
        metrics.quarantined("RatingRecord")
        return RatingRecord()


class RatingBoards:
    """The players' ratings per season and scope, the leaderboards and the histories."""

    def __init__(self, db: Transactions, conditional: ConditionalWrites) -> None:
        self._db = db
        self._conditional = conditional
        self._copy_if_newer = conditional.register(COPY_IF_NEWER)

    async def records(
        self, chat_id: int, season: str, user_ids: list[int]
    ) -> tuple[dict[int, RatingRecord], dict[int, RatingRecord]]:
        """The users' records in the group's season and in the overall one."""
        scopes = (chat_id, None)
        keys = [user_rating_key(uid, scope, season) for uid in user_ids for scope in scopes]
        raws = await self._db.read_each(tuple(keys), lambda pipe, key: pipe.get(key))
        found = [_read_record(raw, key) for key, raw in zip(keys, raws, strict=True)]
        in_group = dict(zip(user_ids, found[::2], strict=True))
        return in_group, dict(zip(user_ids, found[1::2], strict=True))

    async def user_rating(self, user_id: int, chat_id: int | None, season: str) -> RatingRecord:
        key = user_rating_key(user_id, chat_id, season)
        return _read_record(await self._db.redis.get(key), key)

    async def copy(
        self, chat_id: int | None, season: str, user_id: int, name: str, record: RatingRecord
    ) -> None:
        """The user's record as the leaderboard lists it, unless it holds a newer one."""
        players, board = leaderboard_players_key(chat_id, season), leaderboard_key(chat_id, season)
        entry = json.dumps({"name": name, **record.to_dict()}, ensure_ascii=False)
        args = (str(user_id), record.games, entry, record.display, SEASON_KEPT)
        if await self._conditional.run(self._copy_if_newer, [players, board], *args) is not None:
            return
        for _ in range(MAX_RETRIES):
            async with self._db.transaction(players) as pipe:
                try:
                    await pipe.watch(players)
                    if _games_held(await pipe.hget(players, str(user_id))) >= record.games:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.hset(players, str(user_id), entry)
                    pipe.zadd(board, {str(user_id): record.display})
                    pipe.expire(players, SEASON_KEPT)
                    pipe.expire(board, SEASON_KEPT)
                    await pipe.execute()
                    return
                except WatchError:
                    metrics.storage_conflict()
        raise StorageConflict(f"leaderboard {board} kept changing")

    async def top(
        self, chat_id: int | None, season: str, min_games: int, limit: int
    ) -> list[LeaderboardLine]:
        """The season's best ``limit`` players with at least ``min_games`` games."""
        if limit <= 0:
            return []
        players, board = leaderboard_players_key(chat_id, season), leaderboard_key(chat_id, season)
        page = max(2 * limit, 50)
        found: dict[int, tuple[str, RatingRecord]] = {}
        start = 0
        redis = self._db.redis
        while True:
            ranked: list[Any] = await redis.zrevrange(
                board, start, start + page - 1, withscores=True
            )
            if not ranked:
                break
            members = [as_text(member) for member, _ in ranked]
            entries = await redis.hmget(players, members)
            for member, raw in zip(members, entries, strict=True):
                listed = _listed(raw, min_games)
                if listed is not None:
                    found[int(member)] = listed
            start += page
            # Past ``limit``, read on while the scores still tie the last listed one: a tie
            # is broken by games, which the scores do not order.
            shown = sorted((rec.display for _, rec in found.values()), reverse=True)
            if len(shown) >= limit and ranked[-1][1] < shown[limit - 1]:
                break
        records = {uid: rec for uid, (_, rec) in found.items()}
        return [
            LeaderboardLine(e.place, e.player, found[e.player][0], e.rating, e.games, e.wins)
            for e in leaderboard(records, min_games, limit)
        ]

    async def history(self, user_id: int, limit: int) -> list[RatingHistoryEntry]:
        """The user's latest rated games, newest first."""
        if limit <= 0:
            return []
        raws = await self._db.redis.lrange(rating_history_key(user_id), 0, limit - 1)
        return [RatingHistoryEntry(**json.loads(raw)) for raw in raws]


def _board_entry(raw: bytes | str | None) -> tuple[str, RatingRecord] | None:
    """A leaderboard's (name, record) of a player; None if absent or unreadable."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        return str(data.get("name", "")), RatingRecord.from_dict(data)
    except (ValueError, AttributeError):
        log.warning("unreadable leaderboard entry %r", raw)
        return None


def _games_held(raw: bytes | str | None) -> int:
    """Games of the leaderboard's copy (-1: none, or unreadable and to be replaced)."""
    entry = _board_entry(raw)
    return -1 if entry is None else entry[1].games


def _listed(raw: bytes | str | None, min_games: int) -> tuple[str, RatingRecord] | None:
    entry = _board_entry(raw)
    return entry if entry is not None and entry[1].games >= min_games else None


class GameRatings:
    """The rating of each finished game: pending with the game's end, then settled."""

    def __init__(self, db: Transactions, lives: Lifetimes, boards: RatingBoards) -> None:
        self._db = db
        self._lives = lives
        self._boards = boards

    # --- inside a move's transaction ----------------------------------------------

    async def stage(self, pipe: Any, place: Place, table: ChatGame) -> str | None:
        """Before the MULTI of the move that ended ``table``'s game (on its watched
        connection): the entry to leave pending, or None when the game is not rated (no
        game played out, no human, rating off for the group)."""
        try:
            game = rated_game(table)
            if game is not None:
                placings(game)  # a game the model refuses is never left pending
        except ValueError:
            log.exception("chat %s: game %s cannot be rated", place, table.game_id)
            return None
        if game is None:
            return None
        if not read_chat_settings(await pipe.get(settings_key(place.chat_id))).rating:
            return None
        finished_at = table.finished_at if table.finished_at is not None else time.time()
        names = {seat.user_id: seat.name for seat in table.seats if seat.user_id is not None}
        return pending_to_json(PendingRating(game, names, finished_at, season_at(finished_at)))

    def write(self, pipe: Any, place: Place, game_id: str, staged: str | None) -> None:
        """In the move's MULTI: the game to rate, pending as long as the finished game."""
        if staged is not None:
            pipe.set(pending_rating_key(place, game_id), staged, ex=self._lives.finished)

    # --- settling, exactly once -------------------------------------------------------

    async def settle_game(self, place: Place, game_id: str) -> None:
        """Rate a finished game (once per player, whoever calls and however often), then
        forget the pending entry. It counts in its group's scope: its chat's."""
        redis = self._db.redis
        key = pending_rating_key(place, game_id)
        raw = await redis.get(key)
        if raw is None:
            return
        try:
            pending = pending_from_json(raw)
            plan = await self._plan_once(place, game_id, pending)
        except ValueError:
            log.exception("chat %s: the rating of game %s is unreadable; dropped", place, game_id)
            await redis.delete(key)
            return
        for user_id, player in plan.players.items():
            await self._apply_once(place, game_id, plan, user_id, player)
            await self._copy_to_boards(place.chat_id, plan.season, user_id, player.name)
        await redis.delete(key)

    async def _plan_once(self, place: Place, game_id: str, pending: PendingRating) -> RatingPlan:
        """The game's plan: the one stored, or this worker's if it is the first."""
        key = rating_plan_key(place, game_id)
        raw = await self._db.redis.get(key)
        if raw is None:
            mine = await self._plan(place.chat_id, pending)
            # The plan outlives the pending entry (written later, with the same lifetime).
            await self._db.redis.set(key, plan_to_json(mine), nx=True, ex=self._lives.finished)
            raw = await self._db.redis.get(key)
            if raw is None:  # gone at once (an operator's FLUSH): nothing else can use it
                return mine
        return plan_from_json(raw)

    async def _plan(self, chat_id: int, pending: PendingRating) -> RatingPlan:
        game = pending.game
        humans = [seat.user_id for seat in game.seats if isinstance(seat, Human)]
        in_group, overall = await self._boards.records(chat_id, pending.season, humans)
        group_updates = _rated(game, in_group)
        overall_updates = _rated(game, overall)
        players = {
            uid: PlannedPlayer(pending.names.get(uid, ""), group_updates[uid], overall_updates[uid])
            for uid in humans
        }
        return RatingPlan(pending.season, pending.finished_at, players)

    async def _apply_once(
        self, place: Place, game_id: str, plan: RatingPlan, user_id: int, player: PlannedPlayer
    ) -> None:
        """One transaction in the user's slot: both scopes' records, the history entry and
        the once marker together."""
        marker = rated_key(user_id, place, game_id)
        in_group = user_rating_key(user_id, place.chat_id, plan.season)
        overall = user_rating_key(user_id, None, plan.season)
        history = rating_history_key(user_id)
        entry = _history_entry(place.chat_id, plan, player)
        for _ in range(MAX_RETRIES):
            async with self._db.transaction(marker) as pipe:
                try:
                    await pipe.watch(marker, in_group, overall)
                    if await pipe.get(marker) is not None:
                        await pipe.unwatch()  # type: ignore[no-untyped-call]
                        return
                    group_now = _read_record(await pipe.get(in_group), in_group)
                    overall_now = _read_record(await pipe.get(overall), overall)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    new_group = apply_update(group_now, player.group)
                    pipe.set(in_group, record_to_json(new_group), ex=SEASON_KEPT)
                    new_overall = apply_update(overall_now, player.overall)
                    pipe.set(overall, record_to_json(new_overall), ex=SEASON_KEPT)
                    pipe.set(marker, "1", ex=self._lives.settings)
                    pipe.lpush(history, entry)
                    pipe.ltrim(history, 0, HISTORY_KEPT - 1)
                    pipe.expire(history, SEASON_KEPT)
                    await pipe.execute()
                    return
                except WatchError:
                    metrics.storage_conflict()
        raise StorageConflict(f"rating of user {user_id} kept changing")

    async def _copy_to_boards(self, chat_id: int, season: str, user_id: int, name: str) -> None:
        """The user's records as they are now (this game and any since) on both boards."""
        for scope in (chat_id, None):
            record = await self._boards.user_rating(user_id, scope, season)
            await self._boards.copy(scope, season, user_id, name, record)

    # --- reading ----------------------------------------------------------------------

    async def result_lines(
        self, place: Place, game_id: str, *, overall: bool = False
    ) -> dict[int, ResultLine]:
        """Each rated player's private result line of the game ("1,512 → 1,527, +15"),
        in the group's season (or overall); empty until the game's plan is made."""
        raw = await self._db.redis.get(rating_plan_key(place, game_id))
        if raw is None:
            return {}
        try:
            plan = plan_from_json(raw)
        except ValueError:
            log.exception("chat %s: unreadable rating plan of game %s", place, game_id)
            return {}
        return {
            uid: result_line(player.overall if overall else player.group)
            for uid, player in plan.players.items()
        }


def _rated(game: FinishedGame, records: dict[int, RatingRecord]) -> dict[int, RatingUpdate]:
    updates = rate_game(game, records)
    if updates is None:  # ``stage`` leaves no game without a human pending
        raise ValueError("a pending rating without a human")
    return updates


def _history_entry(chat_id: int, plan: RatingPlan, player: PlannedPlayer) -> str:
    entry = RatingHistoryEntry(
        finished_at=plan.finished_at,
        chat_id=chat_id,
        season=plan.season,
        before=player.group.old.display,
        after=player.group.new.display,
        overall_before=player.overall.old.display,
        overall_after=player.overall.new.display,
    )
    return json.dumps(vars(entry))
