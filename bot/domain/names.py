"""How a person's name is shown: short, and unable to turn the text around it."""

from __future__ import annotations

import re

MAX_NAME = 32
"""Characters of a name shown; longer names end in "…" (Telegram allows 129)."""
_BIDI_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Direction marks and overrides: in a name they would flip the rest of the line."""


def short_name(name: str) -> str:
    """``name`` without direction controls, at most ``MAX_NAME`` characters."""
    clean = _BIDI_CONTROLS.sub("", name).strip() or "?"
    return clean if len(clean) <= MAX_NAME else clean[: MAX_NAME - 1].rstrip() + "…"
