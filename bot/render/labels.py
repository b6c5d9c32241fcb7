"""Button labels that are never cut: the width rule and rows packed to meet it.

A keyboard row of k buttons fits a 360-px phone when every label in it is at most
``ROW_WIDTH // k`` wide, where an emoji counts as two characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from telegram import InlineKeyboardButton

ROW_WIDTH = 34
_INVISIBLE = frozenset("\ufe0f\u200d")


def label_width(label: str) -> int:
    """An emoji counts as two characters, its selectors and joiners as none."""
    width = 0
    for i, char in enumerate(label):
        if char in _INVISIBLE:
            continue
        emoji = ord(char) >= 0x1F000 or label[i + 1 : i + 2] == "\ufe0f"
        width += 2 if emoji else 1
    return width


def row_fits(labels: Sequence[str]) -> bool:
    return all(label_width(label) <= ROW_WIDTH // len(labels) for label in labels)


def pack(
    buttons: Iterable[InlineKeyboardButton], most: int = 8
) -> list[list[InlineKeyboardButton]]:
    """Rows in order, each as full as the width rule (and ``most``) allows."""
    rows: list[list[InlineKeyboardButton]] = []
    row: list[InlineKeyboardButton] = []
    for button in buttons:
        candidate = [*row, button]
        if row and (len(candidate) > most or not row_fits([b.text for b in candidate])):
            rows.append(row)
            candidate = [button]
        row = candidate
    if row:
        rows.append(row)
    return rows


def too_wide(rows: Iterable[Sequence[InlineKeyboardButton]]) -> list[tuple[str, int]]:
    """Labels wider than their row allows, with the width allowed (empty: all fit)."""
    out = []
    for row in rows:
        allowed = ROW_WIDTH // len(row)
        out += [(b.text, allowed) for b in row if label_width(b.text) > allowed]
    return out
