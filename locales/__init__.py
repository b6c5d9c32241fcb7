"""The language layer: every user-visible text, one gettext catalogue set per language.

``translator(lang)`` gives the UI strings (``t``/``n``, cards); ``rules_text``, ``rules_short`` and
``how_to_play`` build the rule texts. See ``locales/README.md`` for translators.
"""

from locales.i18n import (
    DEFAULT,
    SUPPORTED,
    Html,
    MessageArgumentsError,
    Translator,
    UnknownMessageError,
    escape,
    language_name,
    negotiate,
    translator,
)
from locales.rules_text import (
    MAX_MESSAGE_LENGTH,
    how_to_play,
    rules_short,
    rules_text,
    split_messages,
    telegram_length,
    visible_text,
)

__all__ = [
    "DEFAULT",
    "MAX_MESSAGE_LENGTH",
    "SUPPORTED",
    "Html",
    "MessageArgumentsError",
    "Translator",
    "UnknownMessageError",
    "escape",
    "how_to_play",
    "language_name",
    "negotiate",
    "rules_short",
    "rules_text",
    "split_messages",
    "telegram_length",
    "translator",
    "visible_text",
]
