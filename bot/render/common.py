"""What every message shares: the rendered value, Telegram's length limit, keyboards,
and seat names."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.domain.callbacks import without_steps
from bot.domain.records import ChatGame, Seat
from locales import Html, Translator, escape

MAX_TEXT = 4096
"""Telegram's limit on a message, in UTF-16 code units of its visible text; we hold the
raw HTML to it, which is never shorter."""
_TOKEN = re.compile(r"<[^<>]*>|&#?[A-Za-z0-9]+;|.", re.DOTALL)
"""One tag, one entity, or one character: a cut never lands inside a tag or entity."""
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)")
TEAM_NAMES = ("A", "B")
"""Partners games: team 0 and team 1 (seat % 2) as shown."""


@dataclass(frozen=True)
class Rendered:
    """A message's HTML text (always valid and within Telegram's limit) and keyboard."""

    text: str
    markup: InlineKeyboardMarkup | None = None
    stable: str | None = None
    """The text without its clock ("⏱ 42 s"), when it has one: a clock that ticked
    is no reason for an edit, so the digest ignores it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", fit(self.text))

    def digest(self) -> str:
        """Identifies the content, so an unchanged message is never edited. A hand's
        buttons carry the step they were made at, yet a keyboard whose moves stay the
        same is the same keyboard: the flow takes a tap from an older step while its
        move is legal. So a step alone (another player's card beaten, a hidden pass)
        edits no hand; the buttons on screen keep their older step."""
        text = self.text if self.stable is None else self.stable
        payload = text + without_steps(repr(self.markup.to_dict() if self.markup else None))
        return hashlib.blake2b(payload.encode(), digest_size=12).hexdigest()


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def fit(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` UTF-16 units, ending in "…": only between tags,
    entities and characters, and every tag still open at the cut closed again."""
    if _utf16(text) <= limit:
        return text
    ellipsis = "…"
    kept: list[str] = []
    open_tags: list[str] = []
    used = 0
    for token in _TOKEN.findall(text):
        after = _tags_open_after(open_tags, token)
        closing = "".join(f"</{name}>" for name in reversed(after))
        size = _utf16(token)
        if used + size + _utf16(ellipsis + closing) > limit:
            break
        kept.append(token)
        used += size
        open_tags = after
    return "".join(kept) + ellipsis + "".join(f"</{name}>" for name in reversed(open_tags))


def _tags_open_after(open_tags: list[str], token: str) -> list[str]:
    tag = _TAG_NAME.match(token)
    if tag is None:
        return open_tags
    name = tag.group(2).lower()
    if tag.group(1) != "/":
        return [*open_tags, name]
    if name not in open_tags:
        return open_tags
    last = len(open_tags) - 1 - open_tags[::-1].index(name)
    return open_tags[:last] + open_tags[last + 1 :]


def markup(rows: Iterable[Sequence[InlineKeyboardButton]]) -> InlineKeyboardMarkup | None:
    kept = [list(r) for r in rows if r]
    return InlineKeyboardMarkup(kept) if kept else None


def chunks(buttons: list[InlineKeyboardButton], size: int) -> list[list[InlineKeyboardButton]]:
    return [buttons[i : i + size] for i in range(0, len(buttons), size)]


COMPUTER_NAMES: Final = ("Vera", "Boris", "Nina", "Oleg", "Lena")
"""The computer seats' own names, in seat order (a table has at most five computers): the
same in every language, so a log read aloud or quoted names one seat."""


def computer_name(level: str, nth: int, tr: Translator) -> Html:
    """The ``nth`` computer seat of a table (0 first), with its level: "🤖 Vera · Normal"."""
    name = COMPUTER_NAMES[nth % len(COMPUTER_NAMES)]
    return tr.t("seat.computer", name=name, level=tr.t(f"seat.level_{level}"))


def button_names(seats: Sequence[Seat], tr: Translator) -> list[Html]:
    """Seat names for a button ("Transfer Q♥️ → 🤖 Vera"): a computer's own name without
    its level, which the table and the log already say."""
    names = seat_names(seats, tr)
    computers = 0
    for i, seat in enumerate(seats):
        if seat.user_id is None and seat.ai is not None:
            names[i] = Html(f"🤖 {COMPUTER_NAMES[computers % len(COMPUTER_NAMES)]}")
            computers += 1
    return names


def place_title(game: ChatGame, tr: Translator) -> Html:
    """Where a game is played, as private messages name it: the group, and its forum
    topic when the game has one and its name is known ("Durak club › Cards")."""
    group = game.chat_title or str(game.chat_id)
    if game.topic_id is None or not game.topic_name:
        return escape(group)
    return tr.t("place.topic", group=group, topic=game.topic_name)


def seat_names(seats: Sequence[Seat], tr: Translator) -> list[Html]:
    """Every seat's name as messages show it. Each computer seat has its own name and
    its level ("🤖 Vera · Normal", "🤖 Boris · Normal"): two seats under one name made
    the log and the card counts read as one seat's."""
    names: list[Html] = []
    computers = 0
    for seat in seats:
        if seat.user_id is None and seat.ai is not None:
            names.append(computer_name(seat.ai, computers, tr))
            computers += 1
        else:
            names.append(escape(seat.shown_name))
    return names


def deep_link(bot_username: str, payload: str) -> str:
    return f"https://t.me/{bot_username}?start={payload}"


def seconds_left(deadline: float | None, now: float | None) -> int | None:
    if deadline is None or now is None:
        return None
    return max(0, math.ceil(deadline - now))


def with_clock(lines: list[str], clock: str, markup: InlineKeyboardMarkup | None) -> Rendered:
    """A message whose ``clock`` (already somewhere in ``lines``) is left out of its digest."""
    text = fit("\n".join(lines))
    stable = text.replace(clock, "") if clock else None
    return Rendered(text, markup, stable)
