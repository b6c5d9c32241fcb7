"""New game ids: six random letters and digits (the callback codec's ``GAME_ID_RE``)."""

from __future__ import annotations

import secrets
import string

_ID_CHARS = string.ascii_lowercase + string.digits


def new_game_id() -> str:
    return "".join(secrets.choice(_ID_CHARS) for _ in range(6))
