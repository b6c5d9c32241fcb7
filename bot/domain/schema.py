"""Record upgrades: every stored record carries ``schema``; older ones are migrated on read.

Bumping a record's schema means: raise its ``Literal`` in ``bot.domain.records``, add the step
from the previous version to ``STEPS`` here, and add fixtures of the new shape to
``tests/fixtures/records/`` (the fixtures of every earlier version must keep loading).
A record newer than this code, or one no step can read, is quarantined by the storage
(never overwritten).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Record = dict[str, Any]
Step = Callable[[Record], Record]

CURRENT: dict[str, int] = {"Table": 1, "ChatSettings": 1, "UserRecord": 1}
"""The schema each kind of record is written with today."""

STEPS: dict[str, dict[int, Step]] = {"Table": {}, "ChatSettings": {}, "UserRecord": {}}
"""Per kind: ``{n: step}`` turns a record of schema ``n`` into one of schema ``n + 1``."""


class UnreadableRecord(ValueError):
    """Not JSON, of a schema this code does not know, or a shape no step can read."""


def upgrade(kind: str, raw: bytes | str) -> Record:
    """The record as a dict of the current schema (migrated step by step if older)."""
    try:
        data = json.loads(raw)
    except ValueError as err:
        raise UnreadableRecord(f"{kind}: not JSON") from err
    if not isinstance(data, dict):
        raise UnreadableRecord(f"{kind}: not an object")
    version = data.get("schema", 1)  # every record since the first release has one
    current = CURRENT[kind]
    if not isinstance(version, int) or version < 1 or version > current:
        raise UnreadableRecord(f"{kind}: schema {version!r} (this code reads 1..{current})")
    while version < current:
        step = STEPS[kind].get(version)
        if step is None:
            raise UnreadableRecord(f"{kind}: no upgrade from schema {version}")
        data = step(data)
        version += 1
        data["schema"] = version
    record: Record = data
    return record


def current_json(kind: str, raw: bytes | str) -> bytes | str:
    """The record as JSON of the current schema, for ``model_validate_json`` (which reads
    JSON types, e.g. tuples from lists, exactly as they were written). Records of today's
    schema start with it (``schema`` is the first field) and pass through untouched."""
    head = f'{{"schema":{CURRENT[kind]},'
    text_head = raw[: len(head)]
    if text_head == head or text_head == head.encode():
        return raw
    return json.dumps(upgrade(kind, raw))
