"""Bot API request parameters, as JSON, form or query values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sandbox.emulator.errors import ERR_CHAT_NOT_FOUND, ApiError
from sandbox.emulator.types import JsonDict


class Params:
    """Request parameters from JSON, form or query data.

    Form values arrive as strings with non-strings JSON-encoded (how PTB sends them), so each
    getter converts only the fields that need it; ``text`` that looks like a number stays text.
    """

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values: JsonDict = dict(values)

    def __contains__(self, name: str) -> bool:
        return self.values.get(name) not in (None, "")

    def get_str(self, name: str) -> str | None:
        value = self.values.get(name)
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value)

    def get_int(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool):
            raise ApiError(400, f"Bad Request: invalid {name} specified")
        if isinstance(value, int):
            return value
        try:
            return int(str(value).strip())
        except ValueError:
            raise ApiError(400, f"Bad Request: invalid {name} specified") from None

    def get_float(self, name: str) -> float | None:
        value = self.values.get(name)
        if value is None or value == "" or isinstance(value, bool):
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ApiError(400, f"Bad Request: invalid {name} specified") from None

    def get_bool(self, name: str, default: bool = False) -> bool:
        value = self.values.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            return value != 0
        return str(value).strip().lower() in ("true", "1")

    def get_json(self, name: str, error: str | None = None) -> Any:
        value = self.values.get(name)
        if not isinstance(value, str):
            return value
        if value == "":
            return None
        try:
            return json.loads(value)
        except ValueError:
            raise ApiError(400, error or f"Bad Request: can't parse {name} JSON object") from None

    def chat_id(self) -> int | str:
        value = self.values.get("chat_id")
        if value is None or value == "":
            raise ApiError(400, "Bad Request: chat_id is empty")
        if isinstance(value, str) and value.strip().startswith("@"):
            return value.strip()
        try:
            return self.get_int("chat_id") or 0
        except ApiError:
            raise ApiError(400, ERR_CHAT_NOT_FOUND) from None

    def chat_id_or_none(self) -> int | None:
        """chat_id for statistics and fault matching; never raises."""
        try:
            value = self.get_int("chat_id")
        except ApiError:
            return None
        return value
