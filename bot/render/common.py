"""What every message shares: the rendered value, Telegram's length limit, keyboards,
and seat names."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.records import Seat
from locales import Html, Translator, escape

MAX_TEXT = 4096
TEAM_NAMES = ("A", "B")
"""Partners games: team 0 and team 1 (seat % 2) as shown."""


@dataclass(frozen=True)
class Rendered:
    text: str
    markup: InlineKeyboardMarkup | None = None

    def digest(self) -> str:
        """Identifies the content, so an unchanged message is never edited."""
        payload = self.text + repr(self.markup.to_dict() if self.markup else None)
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
