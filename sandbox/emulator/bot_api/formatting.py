"""Validating what a bot sends: formatted text (parse_mode, entities) and inline keyboards."""

from __future__ import annotations

from typing import Any

from sandbox.emulator.errors import (
    ERR_BUTTON_DATA,
    ERR_MARKUP_JSON,
    ERR_PARSE_ENTITIES,
    ERR_TEXT_BUTTONS,
    ERR_TEXT_EMPTY,
    ERR_TOO_LONG,
    ApiError,
)
from sandbox.emulator.params import Params
from sandbox.emulator.telegram_html import (
    FormattedText,
    HtmlParseError,
    parse_html,
    strip_formatted,
    utf16_len,
)
from sandbox.emulator.types import JsonDict

MAX_TEXT_LENGTH = 4096
MAX_CALLBACK_DATA_BYTES = 64
_BUTTON_ACTIONS = frozenset(
    {
        "url",
        "callback_data",
        "web_app",
        "login_url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    }
)


def format_text(
    text: str | None, parse_mode: str | None, entities: Any
) -> tuple[FormattedText, str | None]:
    """Visible text + entities as Telegram computes them, or Telegram's error."""
    if not text:
        raise ApiError(400, ERR_TEXT_EMPTY)
    mode = (parse_mode or "").strip()
    if mode.lower() == "html":
        try:
            formatted = parse_html(text)
        except HtmlParseError as err:
            raise ApiError(400, ERR_PARSE_ENTITIES + str(err)) from None
        mode = "HTML"
    elif mode.lower() in ("markdown", "markdownv2"):
        # Markdown is stored verbatim: the Durak bot formats with HTML only.
        formatted = FormattedText(text)
    elif mode:
        raise ApiError(400, "Bad Request: unsupported parse_mode")
    else:
        given = entities if isinstance(entities, list) else []
        formatted = FormattedText(text, tuple(e for e in given if isinstance(e, dict)))
    formatted = strip_formatted(formatted)
    if not formatted.text:
        raise ApiError(400, ERR_TEXT_EMPTY)
    # Telegram counts the limit after entity parsing, in UTF-16 units like all its offsets.
    if utf16_len(formatted.text) > MAX_TEXT_LENGTH:
        raise ApiError(400, ERR_TOO_LONG)
    return formatted, mode or None


def parse_markup(p: Params) -> JsonDict | None:
    raw = p.get_json("reply_markup", ERR_MARKUP_JSON)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ApiError(400, ERR_MARKUP_JSON)
    if "inline_keyboard" not in raw:
        return raw  # reply keyboards etc. are stored but never echoed back
    rows = raw["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise ApiError(
            400,
            'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup should be an '
            "Array of Arrays",
        )
    for row in rows:
        for button in row:
            if not isinstance(button, dict):
                raise ApiError(
                    400,
                    "Bad Request: can't parse inline keyboard button: InlineKeyboardButton "
                    "must be an Object",
                )
            if not isinstance(button.get("text"), str):
                raise ApiError(
                    400,
                    'Bad Request: can\'t parse inline keyboard button: Field "text" must be '
                    "of type String",
                )
            if "callback_data" in button:
                data = button["callback_data"]
                size = len(data.encode("utf-8")) if isinstance(data, str) else 0
                if not 1 <= size <= MAX_CALLBACK_DATA_BYTES:
                    raise ApiError(400, ERR_BUTTON_DATA)
            elif not _BUTTON_ACTIONS & button.keys():
                raise ApiError(400, ERR_TEXT_BUTTONS)
    return {"inline_keyboard": rows}


def inline_keyboard(markup: JsonDict | None) -> Any:
    return (markup or {}).get("inline_keyboard") or None
