"""What every message shares: the rendered value, Telegram's length limit, keyboards,
and seat names."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.records import Seat
from locales import Html, Translator, escape

MAX_TEXT = 4096


@dataclass(frozen=True)
class Rendered:
    text: str
    markup: InlineKeyboardMarkup | None = None
    stable: str | None = None
    """The text without its clock ("⏱ 42 s"), when it has one: a clock that ticked
    is no reason for an edit, so the digest ignores it."""

    def digest(self) -> str:
        """Identifies the content, so an unchanged message is never edited."""
        text = self.text if self.stable is None else self.stable
        payload = text + repr(self.markup.to_dict() if self.markup else None)
        return hashlib.blake2b(payload.encode(), digest_size=12).hexdigest()


def fit(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def markup(rows: Iterable[Sequence[InlineKeyboardButton]]) -> InlineKeyboardMarkup | None:
    kept = [list(r) for r in rows if r]
    return InlineKeyboardMarkup(kept) if kept else None


def chunks(buttons: list[InlineKeyboardButton], size: int) -> list[list[InlineKeyboardButton]]:
    return [buttons[i : i + size] for i in range(0, len(buttons), size)]


def seat_name(seat: Seat, tr: Translator) -> Html:
    if seat.user_id is None and seat.ai is not None:
        return tr.t(f"seat.ai_{seat.ai}")
    return escape(seat.name)


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
