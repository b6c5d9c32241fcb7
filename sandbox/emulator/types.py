"""Type aliases shared by the emulator and the sandbox page."""

from __future__ import annotations

from typing import Any

JsonDict = dict[str, Any]
# A bot named by token, username (with or without @) or user id; None = the first bot.
BotRef = str | int | None
