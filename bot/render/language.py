"""The /language picker."""

from __future__ import annotations

from collections.abc import Sequence

from telegram import InlineKeyboardButton

from bot.domain import callbacks
from bot.render.common import Rendered, chunks, markup
from locales import Translator


def language_picker(tr: Translator, langs: Sequence[str], names: Sequence[str]) -> Rendered:
    buttons = [
        InlineKeyboardButton(name, callback_data=callbacks.encode_language(lang))
        for lang, name in zip(langs, names, strict=True)
    ]
    return Rendered(tr.t("language.pick"), markup(chunks(buttons, 2)))
