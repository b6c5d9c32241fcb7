"""The one callback-data codec. Every button's data is made and read here.

Group buttons: ``g:<game>:<op>``; language picker: ``l:<lang>``; /top's boards:
``t:a`` (over all groups) or ``t:g`` (the chat's group); /settings buttons: ``S:<setting>``
(its name) or ``S:<setting><value index>`` (the value it sets), ``S:m<screen index>`` (a
screen of the menu; codes in ``bot.domain.group_settings``); /rules buttons:
``r:<place>`` (all of them) or ``r:<place>:<section letter>``; hand buttons in a
private chat: ``h:<place>:<game>:<step>:<op><cards>`` (the step the keyboard was made at;
see ``without_steps``). ``<place>`` is the game's ``Place.text``: ``<chat>`` or
``<chat>_<topic>``, so data made before places existed (a bare chat id) reads as the
chat's place without a topic. A card is one character (its index into a 52-letter
alphabet), so the data always fits Telegram's 64 bytes (the longest: a 20-digit chat id,
a 12-digit topic, six cards). Decoding is strict: anything not produced by ``encode_*``
raises ``CallbackError``.

A lobby option's button on the options screen carries the number of the value it sets
after its op (``g:<game>:d2``); without one (older keyboards) it moves to the next value.
The lobby's deep link ``/start g<place>`` (``encode_group_link``) is read here too.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Final, Literal, get_args

from bot.domain.group_settings import SCREEN_CODE, SCREENS, SETTINGS_BY_NAME
from bot.domain.lobby_options import LOBBY_OPTIONS
from bot.domain.place import PLACE_PATTERN, Place
from engine import Action, Attack, Beat, Card, Pass, Swap, Take, Transfer
from locales.rules_text import SECTIONS, Section

MAX_BYTES: Final = 64
ALPHABET: Final = string.ascii_lowercase + string.ascii_uppercase
GAME_ID_RE: Final = re.compile(r"[a-z0-9]{6}")

GroupOp = str
"""A group button's operation: a seat or lobby operation, or a lobby option's ``op``."""
_SEAT_AND_GAME_CODES: Final[dict[str, GroupOp]] = {
    "j": "join", "l": "leave", "e": "ai_easy", "n": "ai_normal", "h": "ai_hard",
    "s": "start", "x": "cancel", "N": "new", "R": "remove_ai", "u": "drop_unreachable",
    "L": "lobby", "H": "how_to", "M": "my_hand",
    "o": "options", "b": "options_back", "X": "cancel_yes", "K": "cancel_no",
}  # fmt: skip
_GROUP_CODES: Final[dict[str, GroupOp]] = {
    **_SEAT_AND_GAME_CODES,
    **{option.code: option.op for option in LOBBY_OPTIONS},
}
_GROUP_OPS: Final = {op: code for code, op in _GROUP_CODES.items()}
GROUP_OPS: Final = frozenset(_GROUP_OPS)
"""Every group operation a button may carry."""

HandOp = Literal["move", "pick", "back", "leave", "leave_yes", "take_back", "play_here", "review"]
HAND_OPS: Final = frozenset(get_args(HandOp))
"""Every hand operation a button may carry."""


@dataclass(frozen=True)
class HandCode:
    """What one hand button's letter does, and how many card letters follow it."""

    op: HandOp
    cards: int | None
    """How many card letters follow the code (None: an attack's 1 to 6)."""
    move: str | None = None
    """For ``move``: the ``kind`` of the action it carries."""


HAND_CODES: Final[dict[str, HandCode]] = {
    "a": HandCode("move", None, "attack"),
    "B": HandCode("move", 2, "beat"),
    "r": HandCode("move", 1, "transfer"),
    "s": HandCode("move", 1, "swap"),
    "t": HandCode("move", 0, "take"),
    "p": HandCode("move", 0, "pass"),
    "b": HandCode("pick", 1),
    "k": HandCode("back", 0),
    "q": HandCode("leave", 0),
    "Q": HandCode("leave_yes", 0),
    "m": HandCode("take_back", 0),
    "w": HandCode("play_here", 0),
    "v": HandCode("review", 0),
}
"""The one map of hand button codes (on the wire: existing keyboards rely on it)."""
_MOVE_CODES: Final = {entry.move: code for code, entry in HAND_CODES.items() if entry.move}
_OP_CODES: Final = {entry.op: code for code, entry in HAND_CODES.items() if entry.move is None}

_GROUP_RE: Final = re.compile(r"g:([a-z0-9]{6}):([A-Za-z])(\d)?")
_OPTION_VALUES: Final = {option.op: len(option.values) for option in LOBBY_OPTIONS}
_LANG_RE: Final = re.compile(r"l:([a-z]{2})")
_RULES_RE: Final = re.compile(rf"r:({PLACE_PATTERN})(?::([a-z]))?")
_SECTION_CODES: Final[dict[Section, str]] = {
    "goal": "g", "bout": "b", "beating": "e", "taking": "t", "options": "o", "ending": "n",
}  # fmt: skip
_SECTIONS_BY_CODE: Final = {code: section for section, code in _SECTION_CODES.items()}
assert set(_SECTION_CODES) == set(SECTIONS)
_TOP_RE: Final = re.compile(r"t:([ag])")
SCREEN: Final = "screen"
"""The ``setting`` of a /settings button that shows a screen of the menu."""
_SETTING_VALUES: Final[dict[str, int]] = {
    **{name: len(setting.values) for name, setting in SETTINGS_BY_NAME.items()},
    SCREEN: len(SCREENS),
}
_SETTING_CODES: Final[dict[str, str]] = {
    **{setting.code: name for name, setting in SETTINGS_BY_NAME.items()},
    SCREEN_CODE: SCREEN,
}
_SETTINGS_BY_NAME: Final = {name: code for code, name in _SETTING_CODES.items()}
_SETTINGS_RE: Final = re.compile(r"S:([A-Za-z])(\d)?")
_HAND_RE: Final = re.compile(
    rf"h:({PLACE_PATTERN}):([a-z0-9]{{6}}):(\d{{1,7}}):([a-zA-Z])([a-zA-Z]{{0,6}})"
)
_HAND_STEP_RE: Final = re.compile(rf"(h:{PLACE_PATTERN}:[a-z0-9]{{6}}:)\d{{1,7}}:")
_GROUP_LINK_RE: Final = re.compile(rf"g({PLACE_PATTERN})")
NO_GAME: Final = "0"
"""A /rules button's place when there is no game (the default options)."""


def without_steps(text: str) -> str:
    """``text`` (callback data, or a keyboard's serialised form) with every hand
    button's step blanked: what the buttons do, not when they were made."""
    return _HAND_STEP_RE.sub(r"\1:", text)


class CallbackError(ValueError):
    """Data no button of ours carries (forged, truncated or from an old version)."""


@dataclass(frozen=True)
class GroupButton:
    game_id: str
    op: GroupOp
    choice: int | None = None
    """A lobby option's button on the options screen: the index of the value it sets."""


@dataclass(frozen=True)
class LanguageButton:
    lang: str


@dataclass(frozen=True)
class HandButton:
    place: Place
    """The game's place (the button itself is in its player's private chat)."""
    game_id: str
    step: int
    op: HandOp
    action: Action | None = None
    """For ``move``: the action; for ``pick``: ``Beat``-to-be as ``Attack((card,))``."""
    card: Card | None = None
    """For ``pick``: the chosen card, whose target is asked next."""


@dataclass(frozen=True)
class RulesButton:
    """The full rules of the game at ``place`` (None: the default options), or one
    ``section`` of them."""

    place: Place | None
    section: Section | None = None


@dataclass(frozen=True)
class TopButton:
    """/top's leaderboard over all groups (``overall``), or that of the chat it is in."""

    overall: bool


@dataclass(frozen=True)
class SettingsButton:
    """A button of the /settings menu: a setting's value (its index in the setting's
    ``values``), or (None) the setting's name; for ``SCREEN``, the screen it shows."""

    setting: str
    value: int | None = None


Button = GroupButton | LanguageButton | HandButton | RulesButton | TopButton | SettingsButton


def _c(card: int) -> str:
    return ALPHABET[card]


def _card(char: str) -> Card:
    return Card(ALPHABET.index(char))


def _checked(data: str) -> str:
    if len(data.encode()) > MAX_BYTES:
        raise ValueError(f"callback data over {MAX_BYTES} bytes: {data!r}")
    return data


def encode_group(game_id: str, op: GroupOp, choice: int | None = None) -> str:
    if choice is not None and not 0 <= choice < _OPTION_VALUES.get(op, 0):
        raise ValueError(f"no value {choice} for {op!r}")
    tail = "" if choice is None else str(choice)
    return _checked(f"g:{game_id}:{_GROUP_OPS[op]}{tail}")


def encode_rules(place: Place | None, section: Section | None = None) -> str:
    tail = "" if section is None else f":{_SECTION_CODES[section]}"
    return _checked(f"r:{NO_GAME if place is None else place.text}{tail}")


def encode_language(lang: str) -> str:
    return _checked(f"l:{lang}")


def encode_top(*, overall: bool) -> str:
    return _checked(f"t:{'a' if overall else 'g'}")


def encode_settings(setting: str, value: int | None = None) -> str:
    if value is not None and not 0 <= value < _SETTING_VALUES[setting]:
        raise ValueError(f"no value {value} for {setting!r}")
    tail = "" if value is None else str(value)
    return _checked(f"S:{_SETTINGS_BY_NAME[setting]}{tail}")


def _hand(place: Place, game_id: str, step: int, body: str) -> str:
    return _checked(f"h:{place.text}:{game_id}:{step}:{body}")


def encode_group_link(place: Place) -> str:
    """The payload of the lobby's deep link (``/start g<place>``): opens the bot's
    private chat, which then shows that place's game."""
    return f"g{place.text}"


def decode_group_link(payload: str) -> Place | None:
    """The place a ``/start`` payload names, or None (not ours: a plain greeting). A link
    made before places existed (``g<chat id>``) names the chat's place."""
    match = _GROUP_LINK_RE.fullmatch(payload)
    try:
        return None if match is None else Place.parse(match[1])
    except ValueError:
        return None


def _place(text: str) -> Place:
    try:
        return Place.parse(text)
    except ValueError:
        raise CallbackError("not a place") from None


def _cards_of(action: Action) -> tuple[Card, ...]:
    """The cards an action's code carries, in wire order."""
    if isinstance(action, Attack):
        return action.cards
    if isinstance(action, Beat):
        return (action.attack, action.card)
    if isinstance(action, Transfer | Swap):
        return (action.card,)
    return ()


def _action(kind: str, cards: tuple[Card, ...]) -> Action:
    """The action of ``kind`` made from its code's cards (``_cards_of`` reversed)."""
    if kind == "attack":
        return Attack(cards)
    if kind == "beat":
        return Beat(cards[0], cards[1])
    if kind == "transfer":
        return Transfer(cards[0])
    if kind == "swap":
        return Swap(cards[0])
    return Take() if kind == "take" else Pass()


def encode_move(place: Place, game_id: str, step: int, action: Action) -> str:
    code = _MOVE_CODES[action.kind] + "".join(_c(c) for c in _cards_of(action))
    return _hand(place, game_id, step, code)


def encode_pick(place: Place, game_id: str, step: int, card: Card) -> str:
    return _hand(place, game_id, step, _OP_CODES["pick"] + _c(card))


def encode_hand_op(
    place: Place,
    game_id: str,
    step: int,
    op: Literal["back", "leave", "leave_yes", "take_back", "play_here", "review"],
) -> str:
    return _hand(place, game_id, step, _OP_CODES[op])


def decode(data: str) -> Button:
    """Read callback data strictly; ``CallbackError`` for anything we did not make."""
    if len(data.encode()) > MAX_BYTES:
        raise CallbackError("too long")
    if m := _GROUP_RE.fullmatch(data):
        op = _GROUP_CODES.get(m[2])
        if op is None:
            raise CallbackError("unknown group op")
        if m[3] is None:
            return GroupButton(m[1], op)
        if int(m[3]) >= _OPTION_VALUES.get(op, 0):
            raise CallbackError("no such value")
        return GroupButton(m[1], op, int(m[3]))
    if m := _LANG_RE.fullmatch(data):
        return LanguageButton(m[1])
    if m := _RULES_RE.fullmatch(data):
        place = None if m[1] == NO_GAME else _place(m[1])
        if m[2] is None:
            return RulesButton(place)
        section = _SECTIONS_BY_CODE.get(m[2])
        if section is None:
            raise CallbackError("unknown rules section")
        return RulesButton(place, section)
    if m := _TOP_RE.fullmatch(data):
        return TopButton(overall=m[1] == "a")
    if m := _SETTINGS_RE.fullmatch(data):
        setting = _SETTING_CODES.get(m[1])
        if setting is None or (setting == SCREEN and m[2] is None):
            raise CallbackError("unknown setting")
        if m[2] is not None and int(m[2]) >= _SETTING_VALUES[setting]:
            raise CallbackError("no such value")
        return SettingsButton(setting, None if m[2] is None else int(m[2]))
    if m := _HAND_RE.fullmatch(data):
        return _decode_hand(_place(m[1]), m[2], int(m[3]), m[4], m[5])
    raise CallbackError("unknown button")


def _decode_hand(place: Place, game_id: str, step: int, code: str, args: str) -> HandButton:
    cards = tuple(_card(ch) for ch in args)
    if len(set(cards)) != len(cards):
        raise CallbackError("a card twice")
    entry = HAND_CODES.get(code)
    if entry is None:
        raise CallbackError("unknown hand op")
    want = entry.cards
    if (want is None and not 1 <= len(cards) <= 6) or (want is not None and len(cards) != want):
        raise CallbackError("wrong number of cards")
    if entry.move is not None:
        return HandButton(place, game_id, step, "move", _action(entry.move, cards))
    if entry.op == "pick":
        return HandButton(place, game_id, step, "pick", card=cards[0])
    return HandButton(place, game_id, step, entry.op)
