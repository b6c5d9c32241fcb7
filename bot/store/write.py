"""What a change of a chat's game decided, for ``Storage.update_table`` to store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from bot.domain.records import ChatGame, StatDelta
from bot.store.owed import Owed, Reowe

T = TypeVar("T")


@dataclass
class Write(Generic[T]):
    """What a change function decided: the table to store (None: store nothing)."""

    table: ChatGame | None
    value: T
    stats: list[StatDelta] = field(default_factory=list)
    output: Owed | None = None
    """Output this change owes the screen (a move); recorded in the same transaction."""
    settle: dict[str, int | None] = field(default_factory=dict)
    """Owed-output fields this change fulfils (e.g. a new hand message's id stored):
    each is cleared in the same transaction if it asks for at most that revision."""
    reowe: Reowe | None = None
    retire: tuple[int, int] | None = None
    """(chat, message) replaced by the new message this change stores: to be deleted,
    owed until it is (a worker that dies first leaves the delete to another)."""
