"""Skill rating ("Play again tomorrow"): a pure model, no I/O, no clock, no storage.

Model. openskill's Plackett-Luce (Weng and Lin 2011): every player is a Gaussian belief
(mu, sigma) about their skill, updated from a game's ranks. It takes 2 to 6 players in
one game, ties and teams, which is what a Durak table needs.

Ranks (``placings``), 0 the best:

* Without partners, the finishing order ranks: who ran out of cards first ranks first,
  the durak last. Players who went out together tie: the engine declares everyone who
  emptied their hand during a bout out at that bout's end, in one move (it lists them by
  who played their last card first, a matter of moments we do not rate). Players still
  holding cards when a game was ended early, other than its durak, tie between the
  finishers and the durak. A draw (no durak) ranks everyone equal.
* With partners (teams of 2 or 3), teams are ranked, not players: the durak's team
  last, every other team first (tied among themselves). The game's outcome is one
  losing team; who of the winners went out first is not part of it. A draw ties all teams.
* Leaving counts as finishing last: below the durak when both exist. Several leavers tie
  with each other (each abandoned the table; an earlier exit is not a worse one). With
  partners, a team with a leaver ranks below a team without one, and the leaver's
  partners keep their rating (they played out a game with a computer standing in for
  their partner: it says little about them), though the game counts for them.
  Leaving never raises a rating (it could only when every team has a leaver).

Computer seats take part in an update with fixed ratings per level (``COMPUTER_SKILL``),
so beating Hard is worth more than beating Easy; their own ratings never change. A game
without any human is not rated at all. Whether a group rates its games at all is the
caller's business: nothing here assumes rating is on.

Display: one conservative number, mu - 3 sigma (the skill the player is at least, with
about 99.9% confidence), scaled so that an average player with an established rating
shows 1500 (see ``display_rating``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final, Generic, Literal, TypeVar

from openskill.models import PlackettLuce, PlackettLuceRating

from engine import State
from engine.events import PlayerOut

ComputerLevel = Literal["easy", "normal", "hard"]
COMPUTER_LEVELS: Final[tuple[ComputerLevel, ...]] = ("easy", "normal", "hard")

# --- the model -------------------------------------------------------------------------

# openskill's own defaults, spelt out so that a library release cannot move our scale
# (and with it every stored rating) under us.
DEFAULT_MU: Final = 25.0
DEFAULT_SIGMA: Final = 25.0 / 3.0
BETA: Final = 25.0 / 6.0
"""Performance noise of one game: how far one game's luck lets a player play above or
below their skill. Durak has much card luck, and this default already reads a 2-player
game between equals as a coin toss."""
TAU: Final = 25.0 / 300.0
"""Added to sigma before every game, so that an established rating can still move when
the player improves (without it sigma would shrink towards 0 and freeze the rating)."""

_MODEL: Final = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA, beta=BETA, tau=TAU)

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 6


@dataclass(frozen=True)
class Skill:
    """A belief about a player's skill: mean and standard deviation, in openskill's units."""

    mu: float
    sigma: float


# Calibrated by `.venv/bin/python bench/rating_calibration.py` (code 94b0c89a1642, 544
# computer-only classic games: 192 at 2 seats, 96 at 3, 256 at 4; 32 shuffled passes),
# which printed: easy mu 18.24 sigma 1.73, normal 25.00 1.65, hard 28.22 1.65 (displayed
# 1321, 1532, 1629); pass-to-pass spread of mu 0.41 (easy), 0.59 (hard), bootstrap 0.67 and
# 0.51. These mix table sizes: two-seat games alone fit Hard far higher (36.65; it loses
# 20% to Normal head to head), four-seat ones barely above Normal (25.67; it is the durak
# half as often, 7% against 14%, but goes out first hardly more often, 35% against 31%):
# a level has one rating for every table size.
COMPUTER_SKILL: Final[Mapping[ComputerLevel, Skill]] = {
    "easy": Skill(mu=18.24, sigma=1.73),
    "normal": Skill(mu=DEFAULT_MU, sigma=1.65),
    "hard": Skill(mu=28.22, sigma=1.65),
}
"""Fixed ratings of the computer players. Anchored so that Normal sits at the default mu:
a newcomer starts out believed as strong as Normal, the level most people meet first, and
their first games against it move them little either way."""

# --- the displayed number --------------------------------------------------------------

DISPLAY_BASE: Final = 1500
DISPLAY_PER_MU: Final = 30.0
"""Display points per unit of mu. Between two established players (c about 6 in
Plackett-Luce) 400 points are odds of about 10 to 1 in a two-player game, as in chess."""
ESTABLISHED_SIGMA: Final = 2.0
"""The sigma a player reaches after about 100 games (measured: 2.0 to 2.6 at 2 to 6
players; it keeps shrinking slowly towards TAU's floor)."""
DISPLAY_ANCHOR: Final = DEFAULT_MU - 3 * ESTABLISHED_SIGMA
"""The conservative value (mu - 3 sigma) shown as ``DISPLAY_BASE``: an average player
(mu 25, the Normal computer's level) with an established rating. A newcomer (mu 25, sigma
25/3, conservative value 0) shows 930 and climbs as the games make the rating sure."""


def conservative(skill: Skill) -> float:
    """The skill the player has at least, with about 99.9% confidence: mu - 3 sigma."""
    return skill.mu - 3.0 * skill.sigma


def display_rating(skill: Skill) -> int:
    """The one number a player sees: ``conservative`` on a chess-like scale."""
    return round(DISPLAY_BASE + DISPLAY_PER_MU * (conservative(skill) - DISPLAY_ANCHOR))


# --- records ---------------------------------------------------------------------------

RECORD_SCHEMA: Final = 1


@dataclass(frozen=True)
class RatingRecord:
    """One player's rating (for one season): what the store keeps, as ``to_dict`` JSON."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    games: int = 0
    """Rated games played."""
    wins: int = 0
    """Rated games won: not the durak, not on the losing team, not left, and not a draw."""

    @property
    def skill(self) -> Skill:
        return Skill(self.mu, self.sigma)

    @property
    def display(self) -> int:
        return display_rating(self.skill)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": RECORD_SCHEMA,
            "mu": self.mu,
            "sigma": self.sigma,
            "games": self.games,
            "wins": self.wins,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RatingRecord:
        """The record ``to_dict`` wrote; ``ValueError`` for another schema or bad values
        (a record misread would silently skew a rating for good)."""
        if data.get("schema") != RECORD_SCHEMA:
            raise ValueError(f"unsupported rating record schema {data.get('schema')!r}")
        mu, sigma = _finite(data, "mu"), _finite(data, "sigma")
        games, wins = _count(data, "games"), _count(data, "wins")
        if sigma <= 0 or wins > games:
            raise ValueError(f"inconsistent rating record {dict(data)!r}")
        return cls(mu, sigma, games, wins)


def _finite(data: Mapping[str, Any], key: str) -> float:
    value = data.get(key)
    # bool is an int: True must not pass for a rating of 1.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"rating record {key} must be a finite number, not {value!r}")
    return float(value)


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"rating record {key} must be a count, not {value!r}")
    return value


# --- a finished game -------------------------------------------------------------------


@dataclass(frozen=True)
class Human:
    user_id: int


@dataclass(frozen=True)
class Computer:
    level: ComputerLevel


Participant = Human | Computer


@dataclass(frozen=True)
class FinishedGame:
    """How a game ended, by seat (0 to n-1), as far as the rating is concerned."""

    seats: tuple[Participant, ...]
    """Who sat where: a human who left stays at their seat here."""
    finished: tuple[tuple[int, ...], ...]
    """Seats that ran out of cards, grouped by the move they went out on, earliest first
    (``finish_groups``). The durak is in none; a leaver's place here is ignored."""
    durak: int | None
    """The loser's seat (with partners: any seat of the losing team); None for a draw."""
    left: tuple[int, ...] = ()
    """Seats whose human left the game before its end."""
    teams: tuple[int, ...] | None = None
    """Partners games: a team id per seat (the engine's is seat % 2); None without."""


def finish_groups(state: State) -> tuple[tuple[int, ...], ...]:
    """Who went out when in an engine game, earliest first: one group per step in which
    the engine declared players out (``PlayerOut``: all who emptied their hand during the
    bout that step ended), so that players who went out together tie."""
    steps: list[tuple[int, ...]] = []
    node = state.history
    while node is not None:
        node, events = node
        out = tuple(e.player for e in events if isinstance(e, PlayerOut))
        if out:
            steps.append(out)
    return tuple(reversed(steps))


def game_from_state(
    state: State, seats: Sequence[Participant], left: Sequence[int] = ()
) -> FinishedGame:
    """The ``FinishedGame`` of an engine game (its own durak; the caller may ``replace``
    it, e.g. by a leaver the bot declared the durak)."""
    teams = tuple(s % 2 for s in range(state.num_players)) if state.rules.partners else None
    return FinishedGame(tuple(seats), finish_groups(state), state.durak, tuple(left), teams)


def _check(game: FinishedGame) -> None:
    n = len(game.seats)
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"a rated game has {MIN_PLAYERS} to {MAX_PLAYERS} seats, not {n}")
    users = [p.user_id for p in game.seats if isinstance(p, Human)]
    if len(set(users)) != len(users):
        raise ValueError("a human sits at two seats")
    out = [s for group in game.finished for s in group]
    named = [*out, *game.left, *([] if game.durak is None else [game.durak])]
    if any(not 0 <= s < n for s in named) or len(set(out)) != len(out):
        raise ValueError(f"bad seats in {game!r}")
    if game.durak is not None and game.durak in out and game.durak not in game.left:
        raise ValueError("the durak cannot have run out of cards")
    if game.teams is not None and (len(game.teams) != n or len(set(game.teams)) < 2):
        raise ValueError("teams: one team id per seat, and at least two teams")


def _dense(keys: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Dense ranks, 0 the best (smallest key); equal keys tie."""
    order = {key: rank for rank, key in enumerate(sorted(set(keys)))}
    return tuple(order[key] for key in keys)


def _solo_keys(game: FinishedGame) -> list[tuple[int, ...]]:
    went_out = {seat: i for i, group in enumerate(game.finished) for seat in group}
    after_all = len(game.finished)
    keys: list[tuple[int, ...]] = []
    for seat in range(len(game.seats)):
        if seat in game.left:
            keys.append((after_all + 2,))
        elif game.durak is None:
            keys.append((0,))  # a draw: nobody lost, so nobody finished above anybody
        elif seat == game.durak:
            keys.append((after_all + 1,))
        else:
            keys.append((went_out.get(seat, after_all),))
    return keys


def _team_keys(game: FinishedGame, teams: tuple[int, ...]) -> list[tuple[int, ...]]:
    left_teams = {teams[s] for s in game.left}
    losing = None if game.durak is None else teams[game.durak]
    return [(int(team in left_teams), int(team == losing)) for team in teams]


def placings(game: FinishedGame) -> tuple[int, ...]:
    """Each seat's rank in ``game``, 0 the best, equal for ties (see the module's doc);
    with partners every member of a team has the team's rank."""
    _check(game)
    if game.teams is None:
        return _dense(_solo_keys(game))
    return _dense(_team_keys(game, game.teams))


def _won(game: FinishedGame, ranks: tuple[int, ...], seat: int) -> bool:
    if seat in game.left or game.durak is None:
        return False
    if game.teams is None:
        return seat != game.durak
    return ranks[seat] == 0 and max(ranks) > 0


# --- rating a game ---------------------------------------------------------------------


@dataclass(frozen=True)
class RatingUpdate:
    old: RatingRecord
    new: RatingRecord


@dataclass(frozen=True)
class ResultLine:
    """The numbers of a player's private result line, to word in their language."""

    old: int
    new: int
    delta: int
    """``new - old``: the shown numbers add up."""
    games: int
    provisional: bool
    """Fewer games than a leaderboard listing needs (``MIN_GAMES_LISTED``)."""


def result_line(update: RatingUpdate, min_games: int | None = None) -> ResultLine:
    old, new = update.old.display, update.new.display
    needed = MIN_GAMES_LISTED if min_games is None else min_games
    return ResultLine(old, new, new - old, update.new.games, update.new.games < needed)


def _openskill(skill: Skill) -> PlackettLuceRating:
    return _MODEL.rating(mu=skill.mu, sigma=skill.sigma)


def rate_ranks(units: Sequence[Sequence[Skill]], ranks: Sequence[int]) -> list[list[Skill]]:
    """One Plackett-Luce update: ``units`` are the players or teams, ``ranks`` theirs
    (0 the best, equal for ties); the new skills, in the same shape. Everyone's skill
    moves here: freezing some (computers) is the caller's choice."""
    if len(units) != len(ranks) or len(units) < 2 or not all(units):
        raise ValueError("rate_ranks needs a rank per unit, two units or more, none empty")
    teams = [[_openskill(skill) for skill in unit] for unit in units]
    rated = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
    return [[Skill(float(r.mu), float(r.sigma)) for r in team] for team in rated]


def _units(game: FinishedGame) -> list[list[int]]:
    """The seats rated together: each seat alone, or each team."""
    if game.teams is None:
        return [[seat] for seat in range(len(game.seats))]
    members: dict[int, list[int]] = {}
    for seat, team in enumerate(game.teams):
        members.setdefault(team, []).append(seat)
    return list(members.values())


def _stranded(game: FinishedGame) -> set[int]:
    """Partners of a leaver, who keep their rating."""
    if game.teams is None:
        return set()
    left_teams = {game.teams[s] for s in game.left}
    teams = game.teams
    return {s for s in range(len(teams)) if teams[s] in left_teams and s not in game.left}


def rate_game(
    game: FinishedGame, records: Mapping[int, RatingRecord]
) -> dict[int, RatingUpdate] | None:
    """Every human's rating update from ``game``, by user id, or None when no human
    played (such a game is never rated). ``records`` holds the humans' current records
    (a missing one is a newcomer's ``RatingRecord()``); computers rate as
    ``COMPUTER_SKILL`` and are left out of the answer."""
    ranks = placings(game)  # checks the game too
    if not any(isinstance(p, Human) for p in game.seats):
        return None

    def before(p: Participant) -> Skill:
        if isinstance(p, Computer):
            return COMPUTER_SKILL[p.level]
        return records.get(p.user_id, RatingRecord()).skill

    units = _units(game)
    skills = [[before(game.seats[s]) for s in unit] for unit in units]
    rated = rate_ranks(skills, [ranks[unit[0]] for unit in units])
    after = {
        s: skill
        for unit, new in zip(units, rated, strict=True)
        for s, skill in zip(unit, new, strict=True)
    }
    stranded = _stranded(game)
    updates: dict[int, RatingUpdate] = {}
    for seat, p in enumerate(game.seats):
        if not isinstance(p, Human):
            continue
        old = records.get(p.user_id, RatingRecord())
        skill = old.skill if seat in stranded else after[seat]
        mu = min(skill.mu, old.mu) if seat in game.left else skill.mu
        wins = old.wins + _won(game, ranks, seat)
        updates[p.user_id] = RatingUpdate(old, RatingRecord(mu, skill.sigma, old.games + 1, wins))
    return updates


def apply_update(current: RatingRecord, update: RatingUpdate) -> RatingRecord:
    """``update`` (computed from ``update.old``) applied to the record as it is now.

    Usually ``current`` is ``update.old`` and the answer is ``update.new``. When another
    game of the same player was applied in between (a game in another group counts for
    the overall rating too), its result must not be lost: the change carries over, mu by
    its difference, sigma by its ratio (it stays positive, and both games' shrinking of
    the uncertainty count), the games and wins by their differences."""
    old, new = update.old, update.new
    if current == old:
        return new
    return RatingRecord(
        mu=current.mu + (new.mu - old.mu),
        sigma=current.sigma * (new.sigma / old.sigma),
        games=current.games + (new.games - old.games),
        wins=current.wins + (new.wins - old.wins),
    )


# --- seasons ---------------------------------------------------------------------------

SeasonLength = Literal["month", "quarter", "half", "year"]
DEFAULT_SEASON_LENGTH: Final[SeasonLength] = "month"
"""Monthly by default: a fresh table every month gives a newcomer (and a slipped player) a
near chance to be listed, which is the point of "play again tomorrow"."""


def season_of(year: int, month: int, length: SeasonLength = DEFAULT_SEASON_LENGTH) -> str:
    """The id of the season ``year``-``month`` falls in: "2026-12" (month), "2026-Q4"
    (quarter), "2026-H2" (half year) or "2026" (year). Ids of one length sort in time."""
    if not 1 <= month <= 12 or not 1 <= year <= 9999:
        raise ValueError(f"no such month: {year}-{month}")
    if length == "month":
        return f"{year:04d}-{month:02d}"
    if length == "quarter":
        return f"{year:04d}-Q{(month - 1) // 3 + 1}"
    if length == "half":
        return f"{year:04d}-H{(month - 1) // 6 + 1}"
    if length == "year":
        return f"{year:04d}"
    raise ValueError(f"unknown season length {length!r}")


def season_of_date(day: date, length: SeasonLength = DEFAULT_SEASON_LENGTH) -> str:
    """``season_of`` a date the caller read (in the time zone it chose); a datetime works."""
    return season_of(day.year, day.month, length)


# --- leaderboard -----------------------------------------------------------------------

MIN_GAMES_LISTED: Final = 5
"""Games a player needs this season before the leaderboard lists them: fewer say too
little, and a lucky first win should not top the table."""

Key = TypeVar("Key", int, str)


@dataclass(frozen=True)
class LeaderboardEntry(Generic[Key]):
    place: int
    """1 for the best; players showing the same rating share a place (1, 2, 2, 4)."""
    player: Key
    rating: int
    games: int
    wins: int


def leaderboard(
    records: Mapping[Key, RatingRecord] | Iterable[tuple[Key, RatingRecord]],
    min_games: int = MIN_GAMES_LISTED,
    limit: int | None = None,
) -> list[LeaderboardEntry[Key]]:
    """Players with at least ``min_games`` games, best displayed rating first. Ties in the
    shown rating go to more games, then to the smaller player key, so the same records
    always give the same table, whatever order the store returned them in."""
    pairs = records.items() if isinstance(records, Mapping) else records
    listed = [(key, rec) for key, rec in pairs if rec.games >= min_games]
    listed.sort(key=lambda kr: (-kr[1].display, -kr[1].games, kr[0]))
    entries: list[LeaderboardEntry[Key]] = []
    for index, (key, rec) in enumerate(listed[:limit]):
        shared = bool(entries) and entries[-1].rating == rec.display
        place = entries[-1].place if shared else index + 1
        entries.append(LeaderboardEntry(place, key, rec.display, rec.games, rec.wins))
    return entries


__all__ = [
    "BETA",
    "COMPUTER_LEVELS",
    "COMPUTER_SKILL",
    "DEFAULT_MU",
    "DEFAULT_SEASON_LENGTH",
    "DEFAULT_SIGMA",
    "DISPLAY_ANCHOR",
    "DISPLAY_BASE",
    "DISPLAY_PER_MU",
    "ESTABLISHED_SIGMA",
    "MIN_GAMES_LISTED",
    "RECORD_SCHEMA",
    "TAU",
    "Computer",
    "ComputerLevel",
    "FinishedGame",
    "Human",
    "LeaderboardEntry",
    "Participant",
    "RatingRecord",
    "RatingUpdate",
    "ResultLine",
    "SeasonLength",
    "Skill",
    "apply_update",
    "conservative",
    "display_rating",
    "finish_groups",
    "game_from_state",
    "leaderboard",
    "placings",
    "rate_game",
    "rate_ranks",
    "result_line",
    "season_of",
    "season_of_date",
]
