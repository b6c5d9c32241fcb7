"""Versioned, validated JSON records kept in Redis (see ``bot.store.storage``).

Each record carries a ``schema`` number; a record of an unknown schema fails
validation instead of being misread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from bot.domain.deal import Deal
from bot.domain.names import short_name
from bot.domain.place import Place
from engine import Rules, Series, State

AiLevel = Literal["easy", "normal", "hard"]
AI_LEVELS: tuple[AiLevel, ...] = ("easy", "normal", "hard")
Phase = Literal["lobby", "playing", "finished", "cancelled"]
Pace = Literal["relaxed", "normal", "fast"]
PACES: tuple[Pace, ...] = ("relaxed", "normal", "fast")
WhoStarts = Literal["anyone", "admins"]
WHO_STARTS: tuple[WhoStarts, ...] = ("anyone", "admins")
"""Who may open and start games in a group (/settings): any member, or its admins."""
TURN_TIMEOUTS: tuple[int, ...] = (30, 45, 60, 90, 120, 180, 300)
"""The turn timeouts (seconds) a group may choose in /settings."""
LobbyScreen = Literal["main", "options", "cancel"]
"""Which keyboard the lobby message shows: its buttons, the options screen, or the
question whether to cancel it."""
_OLD_SERIES_FIELDS = frozenset({"series_played", "series_durak", "dealer"})
_LEFT_OUT_AT_DEFAULT: dict[str, Any] = {
    "pace": "normal",
    "topic_id": None,
    "lobby_screen": "main",
    "wait_window": None,
    "deal": None,
    "turn_timeout": None,
    "ai_first": "easy",
    "topic_name": "",
    "group_hands": None,
}
"""``ChatGame``'s fields added since the first release, and the default each is left out
of the JSON at (see ``_leave_out_new_defaults``)."""
_SEAT_LEFT_OUT_AT_DEFAULT: dict[str, Any] = {"in_group": False, "group_hand_id": None}
"""The same for ``Seat``."""


class Seat(BaseModel):
    """One place at the table: a human (``user_id``) or a computer player (``ai``)."""

    model_config = ConfigDict(extra="forbid")

    user_id: int | None = None
    name: str
    lang: str = "en"
    ai: AiLevel | None = None
    """Set for computer seats, and for a human seat handed to the computer."""
    left: bool = False
    """The human left mid-game; the computer plays the seat out."""
    hand_message_id: int | None = None
    timeouts: int = 0
    """Consecutive turn timeouts; the third hands the seat to the computer."""
    last_active: float = 0.0
    joined_at: float = 0.0
    """When they took the seat: a joiner the bot cannot reach is dropped some time after."""
    in_group: bool = False
    """Plays from the group: no private chat with the bot, so the hand is an ephemeral
    message in the group that only this player sees (set at Start)."""
    group_hand_id: int | None = None
    """That ephemeral message's ``ephemeral_message_id`` (None: not shown yet)."""

    @model_serializer(mode="wrap")
    def _leave_out_new_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """As ``ChatGame``'s: fields added later are left out at their default."""
        data: dict[str, Any] = handler(self)
        for name, default in _SEAT_LEFT_OUT_AT_DEFAULT.items():
            if getattr(self, name) == default:
                data.pop(name, None)
        return data

    @property
    def shown_name(self) -> str:
        """The name as messages show it (short, no direction overrides)."""
        return short_name(self.name)

    @property
    def human(self) -> bool:
        return self.user_id is not None and self.ai is None

    @property
    def computer(self) -> bool:
        return self.ai is not None


class ChatGame(BaseModel):
    """A chat's game record: its lobby, running game and series (not the cards on the
    table, which live in ``state``)."""

    schema_version: Literal[1] = Field(1, alias="schema")
    game_id: str
    chat_id: int
    topic_id: int | None = None
    """The forum topic the game is played in (None: the chat has one game, no topic).
    Left out of the JSON while None, like a normal ``pace``."""
    chat_title: str = ""
    topic_name: str = ""
    """The forum topic's name, read when the lobby opened ("": no topic, or its name was
    not in the message). Left out of the JSON while empty."""
    phase: Phase = "lobby"
    creator_id: int
    rules: Rules = Rules()
    pace: Pace = "normal"
    """How long the bot waits on people at this table (a lobby option, not a rule of the
    game; ``bot.domain.flow.common.table_timing`` turns it into seconds). Records stored before
    it existed load as "normal", so it needs no schema version of its own."""
    group_hands: bool | None = None
    """Whether players without a private chat may play from the group (the bot is an
    admin there, as last seen at a join or Start); None: nobody needed to."""
    ai_first: AiLevel = "easy"
    """The computer level the lobby offers first (its button leads the row): the group's
    default (/settings); left out of the JSON at "easy", as the lobby always offered it."""
    turn_timeout: float | None = None
    """The group's turn timeout (/settings) in seconds, before the pace scales it; None:
    the bot's own (``Timing.turn_timeout``). Taken from the group's settings when a lobby
    opens and when it starts; left out of the JSON while None."""
    seats: list[Seat] = []
    state: dict[str, Any] | None = None
    series: Series | None = None
    """The series so far (the engine keeps the score and who deals next); None until
    the first game of a series is dealt, and again when seats or options change."""
    forced_durak: int | None = None
    """The first seat that left mid-game: that game's durak whatever happens next."""
    lobby_expires_at: float | None = None
    """An open lobby closes then (epoch seconds): joins do not extend it. Storage should
    let the record expire at this time while the phase is "lobby"."""
    creator_seen_at: float = 0.0
    """The creator's last tap in the lobby; long ago, any member may cancel it."""
    table_message_id: int | None = None
    lobby_message_id: int | None = None
    show_how_to: bool = True
    """The lobby shows the "How to play" text (the group's first) or a button for it."""
    lobby_screen: LobbyScreen = "main"
    """The lobby message's keyboard (one for everyone: it is a group message). Stored
    here so the screen survives a restart and another worker; "main" is left out of the
    JSON like a normal pace, so it needs no schema version of its own."""
    turn_deadline: float | None = None
    ai_due: float | None = None
    reminder_due: float | None = None
    """When the player the game cannot go on without gets one notifying reminder."""
    reminded_step: int = -1
    """The step whose player was reminded (their hand says so until they move)."""
    last_seen_step: int = -1
    wait_window: float | None = None
    """Seconds the humans are waited on at ``last_seen_step`` (``flow.turns.wait_window``):
    the turn gate counts them again from when a late hand landed."""
    final_order: list[int] = []
    final_durak: int | None = None
    final_losing_team: int | None = None
    """Partners games: the team (seat % 2) that lost; every member is a durak."""
    ended_early: bool = False
    auto_steps: list[int] = []
    """Recent steps whose move the bot made for a player whose time ran out (the log
    marks them ⏱); only the last few are kept."""
    started_at: float | None = None
    finished_at: float | None = None
    deal: Deal | None = None
    """The current game's secret salt and deck order (``bot.domain.deal``), set at Start:
    its code is announced then, its reveal is in the result. None in a lobby, and for a
    game dealt before verifiable deals (from ``game_seed``): that one shows no code."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    _parsed: tuple[dict[str, Any], State] | None = PrivateAttr(None)
    """``state`` and the engine state parsed from it (see ``engine_state``)."""

    @model_validator(mode="before")
    @classmethod
    def _drop_old_series_fields(cls, data: Any) -> Any:
        """Records stored before the engine kept the series score: the series restarts."""
        if isinstance(data, dict) and "series_played" in data:
            data = {k: v for k, v in data.items() if k not in _OLD_SERIES_FIELDS}
        return data

    @model_serializer(mode="wrap")
    def _leave_out_new_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Fields added since the first release are left out while at their default, so
        the record stays readable by code from before them (extra fields are refused): a
        rolling deploy or a rollback only trips on games that use one of them."""
        data: dict[str, Any] = handler(self)
        for name, default in _LEFT_OUT_AT_DEFAULT.items():
            if getattr(self, name) == default:
                data.pop(name, None)
        return data

    def engine_state(self) -> State:
        """The running game. Parsed once per record read: a move's messages and views all
        ask for it (the stored dict is never changed in place, only replaced)."""
        if self.state is None:
            raise ValueError("no game running")
        parsed = self._parsed
        if parsed is not None and parsed[0] is self.state:
            return parsed[1]
        state = State.from_dict(self.state)
        self._parsed = (self.state, state)
        return state

    def set_engine_state(self, state: State) -> None:
        """Store ``state`` as the running game (``engine_state`` then returns it as is)."""
        self.state = state.to_dict()
        self._parsed = (self.state, state)

    @property
    def place(self) -> Place:
        """Where the game lives: what its keys, messages and buttons are addressed by."""
        return Place(self.chat_id, self.topic_id)

    @property
    def games_played(self) -> int:
        """Games of the current series finished so far."""
        return self.series.games_played if self.series is not None else 0

    def seat_of(self, user_id: int) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.user_id == user_id and not seat.left:
                return i
        return None

    def humans(self) -> list[int]:
        return [s.user_id for s in self.seats if s.human and s.user_id is not None]

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)


class LobbyDefaults(BaseModel):
    """The options a group's new lobbies start from (/settings): each lobby option's value
    (``bot.domain.lobby_options``: its rules and the table's pace), and the computer level
    offered first."""

    model_config = ConfigDict(extra="forbid")

    rules: Rules = Rules()
    pace: Pace = "normal"
    ai: AiLevel = "easy"
    """The computer level the lobby offers first."""


_SETTINGS_LEFT_OUT_AT_DEFAULT: dict[str, Any] = {
    "rating": True,
    "defaults": None,
    "starts": "anyone",
    "turn_timeout": None,
    "tidy": True,
}
"""``ChatSettings``' fields added since the first release, left out of the JSON at their
default (as ``ChatGame`` does: code from before them still reads every group that keeps
them so)."""


class ChatSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: Literal[1] = Field(1, alias="schema")
    lang: str | None = None
    how_to_shown: bool = False
    """The first lobby here showed "How to play"; later lobbies offer it as a button."""
    rating: bool = True
    """The group's games are rated (``bot.domain.rating``); /settings turns it off."""
    defaults: LobbyDefaults | None = None
    """What a new lobby (/newgame) starts from; None (never set): the last game's options."""
    starts: WhoStarts = "anyone"
    """Who may open and start games here."""
    turn_timeout: int | None = None
    """Seconds a player has for a move (one of ``TURN_TIMEOUTS``); None: the bot's own."""
    tidy: bool = True
    """Tidy-up: the bot deletes its superseded messages and command replies, and (with
    the right to) the /newgame commands of games that ended (``bot.app.tidy``)."""

    def to_json(self) -> str:
        # Fields at their default are left out, so that code from before them (extra
        # fields are refused) still reads the settings of every group that keeps them.
        exclude = {
            name
            for name, default in _SETTINGS_LEFT_OUT_AT_DEFAULT.items()
            if getattr(self, name) == default
        }
        return self.model_dump_json(by_alias=True, exclude=exclude or None)


class UserRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: Literal[1] = Field(1, alias="schema")
    dm_open: bool = False
    lang: str | None = None
    name: str = ""


class StatLine(BaseModel):
    """One member's counts (per group, or a user's totals)."""

    user_id: int
    name: str = ""
    played: int = 0
    durak: int = 0
    first: int = 0


@dataclass
class StatDelta:
    """Counts to add for one human at the end of a game."""

    user_id: int
    name: str
    played: int = 1
    durak: int = 0
    first: int = 0


@dataclass(frozen=True)
class LeaderboardLine:
    """One row of a season's leaderboard (a group's, or over all groups)."""

    place: int
    """1 for the best; players showing the same rating share a place."""
    user_id: int
    name: str
    rating: int
    """The displayed rating (``bot.domain.rating.display_rating``)."""
    games: int
    wins: int


@dataclass(frozen=True)
class RatingHistoryEntry:
    """One rated game in a user's rating history (newest first in the store)."""

    finished_at: float
    chat_id: int
    season: str
    before: int
    """The displayed rating in the group's season before the game."""
    after: int
    overall_before: int
    """The same over all groups (the overall season)."""
    overall_after: int
