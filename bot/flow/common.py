"""What every flow operation shares: the refusal, the person acting, the effects."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from bot.storage import StatDelta


class FlowError(Exception):
    """A refused operation; ``key`` names the catalogue text of the toast."""

    def __init__(self, key: str, **kwargs: Any) -> None:
        super().__init__(key)
        self.key = key
        self.kwargs = kwargs


@dataclass(frozen=True)
class Person:
    user_id: int
    name: str
    lang: str = "en"


@dataclass
class Announcement:
    key: str
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Effects:
    """What the sender should do after a change was stored."""

    notify: set[int] = field(default_factory=set)
    """Users who newly must act: their hand is re-sent as a new (notifying) message."""
    calm: set[int] = field(default_factory=set)
    """Users whose hand may be refreshed a little later: they just moved and have
    nothing to do now, so the edit can merge with the next one."""
    announce: list[Announcement] = field(default_factory=list)
    stats: list[StatDelta] = field(default_factory=list)
    started: bool = False
    ended: bool = False


def game_seed(game_id: str, salt: int) -> int:
    digest = hashlib.sha256(f"{game_id}:{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
