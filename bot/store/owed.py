"""What a move owes the screen (``Owed``), and what a chat still owes, read back.

Both live in the chat's owed-output hash (``output_key``; its fields:
``bot.store.owed_fields``), written in the move's own transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bot.domain.roles import Role
from bot.store import owed_fields
from bot.store.conditional import as_text


@dataclass
class Owed:
    """What a move must show, stored in the move's own transaction (see ``output_key``).

    ``targets``: "group" and "hand:<user id>", each re-rendered from the stored record
    (idempotent); ``notify``: users whose hand is re-sent as a new message; ``notes``: new
    group messages (announcements, results), each sent once. ``rev`` and ``note_ids`` are
    filled in when the move commits."""

    targets: list[Role]
    notify: list[int] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    rev: int = 0
    note_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class OwedOutput:
    """What a chat still owes the screen, read back from ``output_key``."""

    rev: int
    targets: dict[Role, int]
    """Target -> the revision it must show at least."""
    notify: dict[int, int]
    notes: dict[str, dict[str, Any]]
    """Note id -> note; ids sort in the order the notes were made."""
    deletes: list[tuple[int, int]] = field(default_factory=list)
    """(chat, message) of messages replaced by a new one and not yet deleted."""

    @property
    def complete(self) -> bool:
        return not (self.targets or self.notify or self.notes or self.deletes)


@dataclass
class Reowe:
    """A new message's id being stored by a job that rendered revision ``seen``: if a
    move came since, the targets are owed again (the move's own job may have edited the
    message this one replaces). ``newer`` tells the job to render again."""

    targets: list[Role]
    seen: int
    newer: bool = False


def note_of(raw: Any) -> dict[str, Any]:
    note = json.loads(raw)
    return note if isinstance(note, dict) else {}


def owed_of(raw: dict[Any, Any]) -> OwedOutput:
    """The owed output from its hash (HGETALL); fields it does not know are skipped."""
    rev, targets, notify, notes, deletes = 0, {}, {}, {}, []
    for key, value in raw.items():
        name, text = as_text(key), as_text(value)
        if name == owed_fields.REV:
            rev = int(text)
        elif (role := owed_fields.owed_role(name)) is not None:
            targets[role] = int(text)
        elif (user := owed_fields.notified_user(name)) is not None:
            notify[user] = int(text)
        elif (note_id := owed_fields.note_id(name)) is not None:
            notes[note_id] = note_of(text)
        elif (deleted := owed_fields.deleted_message(name)) is not None:
            deletes.append(deleted)
    return OwedOutput(rev, targets, notify, dict(sorted(notes.items())), sorted(deletes))
