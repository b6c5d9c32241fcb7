"""Every Redis key the bot writes, spelt in one place.

A chat's keys carry a ``{chat_id}`` hash tag, a user's a ``{user_id}`` one, so each
chat's (each user's) keys share a cluster slot and change together in one MULTI. The
indexes over all chats are split over shards, each shard its own slot.

These strings are what stored data is found by: never change one without a migration.
"""

from __future__ import annotations

from typing import Final

from bot.domain.roles import Role

# --- a chat's records -------------------------------------------------------------


def table_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:table"


def stats_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:stats"


def settings_key(chat_id: int) -> str:
    return f"durak:{{{chat_id}}}:settings"


def moved_key(chat_id: int) -> str:
    """Where a group that became a supergroup lives now (old ids in buttons follow it)."""
    return f"durak:{{{chat_id}}}:moved"


def migrated_key(new: int, old: int) -> str:
    """Once marker: the old chat's records were copied into the new one."""
    return f"durak:{{{new}}}:migrated-from:{old}"


def quarantine_key(chat_id: int, stamp: float) -> str:
    """Where an unreadable table is moved (same slot: the move is one transaction)."""
    return f"durak:{{{chat_id}}}:quarantine:{stamp:.6f}"


def lost_notice_key(chat_id: int, game_id: str) -> str:
    """Once marker: the group was told this game was lost."""
    return f"durak:{{{chat_id}}}:lost:{game_id}"


# --- what a chat's moves owe the screen, and what it shows ------------------------


def output_key(chat_id: int) -> str:
    """What the chat's last moves still owe the screen (written with each move; its
    fields: ``bot.store.owed_fields``)."""
    return f"durak:{{{chat_id}}}:output"


def screen_key(chat_id: int) -> str:
    """What each message of the chat's game shows, as the last worker to change it saw:
    one field per message role (``group``, ``hand:<user id>``), "<message id>:<digest>";
    ``open:<role>`` while a worker may be changing it (see ``Storage.open_screen``), and
    ``sent:<role>``, the id of a new message the record may not hold yet."""
    return f"durak:{{{chat_id}}}:screen"


# The words stored in these two keys ("editing", "sending") predate the lock vocabulary.


def edit_claim_key(chat_id: int, role: Role) -> str:
    """Claim: held by the one worker refreshing that message right now."""
    return f"durak:{{{chat_id}}}:editing:{role}"


def send_claim_key(chat_id: int, slot: str) -> str:
    """Claim: held by the one worker sending ``slot``'s new message right now."""
    return f"durak:{{{chat_id}}}:sending:{slot}"


def shown_key(chat_id: int) -> str:
    """Per player of the chat's game: the step of the last hand known to be on screen."""
    return f"durak:{{{chat_id}}}:shown"


# --- statistics ---------------------------------------------------------------------


def pending_stats_key(chat_id: int, game_id: str) -> str:
    """Per finished game: the user totals still to add (written with the game's end)."""
    return f"durak:{{{chat_id}}}:pending-stats:{game_id}"


def user_key(user_id: int) -> str:
    return f"durak:user:{{{user_id}}}"


def user_stats_key(user_id: int) -> str:
    return f"durak:user:{{{user_id}}}:stats"


def counted_key(user_id: int, chat_id: int, game_id: str) -> str:
    """Once marker: the game was added to the user's totals (a repeat adds nothing)."""
    return f"durak:user:{{{user_id}}}:counted:{chat_id}:{game_id}"


# --- ratings (bot.store.ratings) ----------------------------------------------------
#
# A scope is a group (its chat id) or every group together (None: "all"). A game's
# entries live in its chat's slot, a user's ratings in the user's, and each leaderboard
# in one slot: the group's, or its season's own for the overall one.


def pending_rating_key(chat_id: int, game_id: str) -> str:
    """Per finished game: the game still to rate (written with the game's end)."""
    return f"durak:{{{chat_id}}}:pending-rating:{game_id}"


def rating_plan_key(chat_id: int, game_id: str) -> str:
    """Per finished game, written once: every player's rating before and after it, in
    both scopes, which every settling worker applies (and the result lines read)."""
    return f"durak:{{{chat_id}}}:rating-plan:{game_id}"


def _scope(chat_id: int | None) -> str:
    return "all" if chat_id is None else str(chat_id)


def user_rating_key(user_id: int, chat_id: int | None, season: str) -> str:
    """A user's rating record (``RatingRecord`` JSON) in a group's season, or overall."""
    return f"durak:user:{{{user_id}}}:rating:{_scope(chat_id)}:{season}"


def rated_key(user_id: int, chat_id: int, game_id: str) -> str:
    """Once marker: the game's rating plan was applied to the user (both scopes)."""
    return f"durak:user:{{{user_id}}}:rated:{chat_id}:{game_id}"


def rating_history_key(user_id: int) -> str:
    """The user's rated games, newest first, capped (``RatingHistoryEntry`` JSON)."""
    return f"durak:user:{{{user_id}}}:rating-history"


def leaderboard_key(chat_id: int | None, season: str) -> str:
    """A season's leaderboard: user ids scored with their displayed rating."""
    if chat_id is None:
        return f"durak:{{ratings:{season}}}:leaderboard"
    return f"durak:{{{chat_id}}}:leaderboard:{season}"


def leaderboard_players_key(chat_id: int | None, season: str) -> str:
    """Next to ``leaderboard_key`` (same slot): user id -> name and rating record."""
    if chat_id is None:
        return f"durak:{{ratings:{season}}}:players"
    return f"durak:{{{chat_id}}}:leaderboard-players:{season}"


# --- indexes over all chats, sharded --------------------------------------------------

SHARDS: Final = 16
"""The running-games index, the timers and the owed-output index are split over this
many keys, each in its own cluster slot, so no single key takes every game's traffic."""
PENDING_SHARDS: Final = 4


def shard_of(chat_id: int, shards: int = SHARDS) -> int:
    return chat_id % shards


TIMERS_KEY: Final = "durak:{timers}:due"
RUNNING_KEY: Final = "durak:{timers}:running"
"""Before sharding: one key each. Still read (and drained) so an upgrade loses nothing."""


def timers_key(shard: int) -> str:
    return f"durak:{{timers:{shard}}}:due"


def running_key(shard: int) -> str:
    return f"durak:{{running:{shard}}}:chats"


def output_index_key(shard: int) -> str:
    """Chats that may owe output, each scored with the time its lease ends."""
    return f"durak:{{output:{shard}}}:chats"


def pending_index_key(shard: int) -> str:
    """Finished games whose user totals or rating may still be pending ("<chat>:<game
    id>")."""
    return f"durak:{{pending:{shard}}}:games"


ALL_TIMER_KEYS: Final = (TIMERS_KEY, *(timers_key(n) for n in range(SHARDS)))
ALL_RUNNING_KEYS: Final = (RUNNING_KEY, *(running_key(n) for n in range(SHARDS)))
ALL_OUTPUT_INDEX_KEYS: Final = tuple(output_index_key(n) for n in range(SHARDS))


# --- reviews by the Hard player (bot.store.reviews) -------------------------------------
#
# A finished game's review subject and each player's result live in the chat's slot (with
# the game); the fleet's queue, its leases, the per-player marks and the rate counter share
# one slot of their own, so each step on them is one transaction.


def review_subject_key(chat_id: int, game_id: str) -> str:
    """A finished game as its reviews need it (``bot.domain.review.ReviewSubject``)."""
    return f"durak:{{{chat_id}}}:review-game:{game_id}"


def review_result_key(chat_id: int, game_id: str, user_id: int) -> str:
    """One player's review of one game (``ReviewResult`` JSON), kept like the game."""
    return f"durak:{{{chat_id}}}:review:{game_id}:{user_id}"


REVIEW_JOBS_KEY: Final = "durak:{reviews}:jobs"
"""Review jobs, each scored with when it may be taken: 0 when queued, its lease's end
while a worker has it (a worker that dies leaves it to the next one once that passes)."""


def review_job_key(job_id: str) -> str:
    """A job's hash: what to review and the progress message's id."""
    return f"durak:{{reviews}}:job:{job_id}"


def review_running_key(user_id: int) -> str:
    """The user's review being worked on (its job id): one at a time per player."""
    return f"durak:{{reviews}}:running:{user_id}"


def review_rate_key(minute: int) -> str:
    """Reviews started in one minute, fleet-wide (``REVIEWS_PER_MINUTE``)."""
    return f"durak:{{reviews}}:rate:{minute}"
