"""The fields of a place's owed-output hash (``output_key``), spelt in one place.

``rev`` counts the moves that owed something; ``owe:<role>`` is the revision a message
must show at least; ``new:<user>`` asks for that user's hand as a new, notifying message;
``note:<id>`` is a group message to send once (its JSON); ``del:<chat>:<message>`` a
message to delete once. Notes and deletes are settled by doing them, not by a later
revision covering them.
"""

from __future__ import annotations

from typing import Final

from bot.domain.roles import Role

REV: Final = "rev"
_OWE: Final = "owe:"
_NEW: Final = "new:"
_NOTE: Final = "note:"
_DELETE: Final = "del:"


def owe(role: Role) -> str:
    return f"{_OWE}{role}"


def notify(user_id: int) -> str:
    return f"{_NEW}{user_id}"


def note(note_id: str) -> str:
    return f"{_NOTE}{note_id}"


def delete(chat_id: int, message_id: int) -> str:
    return f"{_DELETE}{chat_id}:{message_id}"


def done_once(name: str) -> bool:
    """A note or a delete: settled when done, never by a newer revision."""
    return name.startswith((_NOTE, _DELETE))


def owed_role(name: str) -> Role | None:
    return name.removeprefix(_OWE) if name.startswith(_OWE) else None


def notified_user(name: str) -> int | None:
    return int(name.removeprefix(_NEW)) if name.startswith(_NEW) else None


def note_id(name: str) -> str | None:
    return name.removeprefix(_NOTE) if name.startswith(_NOTE) else None


def deleted_message(name: str) -> tuple[int, int] | None:
    """(chat id, message id) of a ``del:`` field."""
    if not name.startswith(_DELETE):
        return None
    chat, _, message = name.removeprefix(_DELETE).partition(":")
    return int(chat), int(message)
