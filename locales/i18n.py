"""Translations: gettext catalogues (``.po``) read at run time with Babel.

Every user-visible text lives in ``locales/<lang>/LC_MESSAGES/<domain>.po``; Python code
only names messages by symbolic ids (``"lobby.title"``). Two domains:

* ``bot``: the UI strings of the bot;
* ``rules``: the rule texts (see ``locales.rules_text``).

The English catalogue holds the English texts and is the fallback for any message a
language lacks (or has marked fuzzy), so a user never sees a raw id. Plural forms come
from each catalogue's ``Plural-Forms`` header. Texts are Telegram HTML: string arguments
are escaped unless wrapped in ``Html``.
"""

from __future__ import annotations

import gettext
import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from io import BytesIO
from string import Formatter
from typing import Final

from babel import Locale
from babel.messages.catalog import Catalog, Message
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from engine.cards import Card

SUPPORTED: Final[tuple[str, ...]] = ("en", "es", "de", "pt", "ru", "uk")
DEFAULT: Final = "en"
_CORE_DOMAINS: Final = ("bot", "rules")


def _domains() -> tuple[str, ...]:
    """``bot`` and ``rules`` first, then every other catalogue English has: a feature may
    keep its texts in a domain of its own (``locales/<lang>/LC_MESSAGES/<domain>.po``)."""
    english = resources.files("locales").joinpath(DEFAULT, "LC_MESSAGES")
    found = sorted(f.name.removesuffix(".po") for f in english.iterdir() if f.name.endswith(".po"))
    return (*_CORE_DOMAINS, *(d for d in found if d not in _CORE_DOMAINS))


DOMAINS: Final[tuple[str, ...]] = _domains()

# Message ids of the localised rank letters (the suits stay symbols).
_RANK_KEYS: Final = {11: "card.jack", 12: "card.queen", 13: "card.king", 14: "card.ace"}


class Html(str):
    """Trusted Telegram HTML: inserted into a message as is, never escaped again.

    Everything ``Translator.t``/``n`` returns is ``Html``, so a rendered message can be
    passed as an argument of another one.
    """

    __slots__ = ()


def escape(text: str) -> Html:
    """``text`` with ``&``, ``<`` and ``>`` escaped for Telegram's HTML parse mode."""
    if isinstance(text, Html):
        return text
    return Html(html.escape(text, quote=False))


Arg = str | int


class UnknownMessageError(KeyError):
    """The message id is not in the English catalogue of either domain."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown message"


class MessageArgumentsError(TypeError):
    """A message was given missing, unexpected or ill-typed arguments."""


def negotiate(language_code: str | None) -> str:
    """Telegram's ``language_code`` (``"pt-br"``, ``"es-419"``, None …) → a supported language.

    The primary subtag decides; anything unsupported or missing gives ``DEFAULT``.
    """
    if not language_code:
        return DEFAULT
    primary = language_code.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary if primary in SUPPORTED else DEFAULT


def placeholders(template: str) -> frozenset[str]:
    """The ``str.format`` field names used in ``template``."""
    names = set()
    for _, field, _, _ in Formatter().parse(template):
        if field is not None:
            names.add(field.split(".", 1)[0].split("[", 1)[0])
    return frozenset(names)


@dataclass(frozen=True)
class MessageInfo:
    """What the English catalogue says about one message id."""

    domain: str
    plural: bool
    fields: frozenset[str]
    """Placeholders of the English text (all forms together for plural messages)."""


def catalogue_path(lang: str, domain: str) -> str:
    """The ``.po`` file of ``lang`` and ``domain`` (for tools and tests)."""
    return str(resources.files("locales").joinpath(lang, "LC_MESSAGES", f"{domain}.po"))


def _check_lang(lang: str) -> None:
    if lang not in SUPPORTED:
        raise ValueError(f"unsupported language {lang!r}; supported: {', '.join(SUPPORTED)}")


@cache
def load_catalog(lang: str, domain: str) -> Catalog:
    """The Babel ``Catalog`` parsed from the ``.po`` file of ``lang`` and ``domain``."""
    _check_lang(lang)
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; domains: {', '.join(DOMAINS)}")
    source = resources.files("locales").joinpath(lang, "LC_MESSAGES", f"{domain}.po")
    with source.open("rb") as fileobj:
        return read_po(fileobj, locale=lang, domain=domain, abort_invalid=True)


def compile_catalog(
    catalog: Catalog, fallback: gettext.NullTranslations | None
) -> gettext.GNUTranslations:
    """Compile a catalogue in memory (no ``.mo`` files) into gettext translations.

    Untranslated and fuzzy messages are left out, so ``fallback`` answers for them.
    """
    buffer = BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    translations = gettext.GNUTranslations(buffer)
    if fallback is not None:
        translations.add_fallback(fallback)
    return translations


@cache
def _translations(lang: str, domain: str) -> gettext.GNUTranslations:
    fallback = None if lang == DEFAULT else _translations(DEFAULT, domain)
    return compile_catalog(load_catalog(lang, domain), fallback)


def _key(message: Message) -> str:
    return str(message.id[0] if isinstance(message.id, tuple | list) else message.id)


def _forms(message: Message) -> tuple[str, ...]:
    """The translated text(s) of a message: one for singular, one per plural form."""
    string = message.string
    if isinstance(string, tuple | list):
        return tuple(str(form or "") for form in string)
    return (str(string or ""),)


def message_texts(lang: str, domain: str) -> dict[str, tuple[str, ...]]:
    """Every message of a catalogue: id → its forms (one for singular messages).

    Fuzzy and untranslated messages are left out, as they are at run time.
    """
    out: dict[str, tuple[str, ...]] = {}
    for message in load_catalog(lang, domain):
        forms = _forms(message)
        if message.id and not message.fuzzy and any(forms):
            out[_key(message)] = forms
    return out


@cache
def message_index() -> dict[str, MessageInfo]:
    """Every message id of the English catalogues with its domain, kind and placeholders."""
    index: dict[str, MessageInfo] = {}
    for domain in DOMAINS:
        for message in load_catalog(DEFAULT, domain):
            if not message.id:
                continue
            fields = frozenset().union(*(placeholders(form) for form in _forms(message)))
            plural = isinstance(message.id, tuple | list)
            index.setdefault(_key(message), MessageInfo(domain, plural, fields))
    return index


def _render(value: object, key: str, name: str) -> object:
    if isinstance(value, Html):
        return value
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise MessageArgumentsError(
        f"message {key!r}: argument {name!r} must be str, Html or int, not {type(value).__name__}"
    )


class Translator:
    """All texts of one language. Get one with ``translator(lang)``."""

    def __init__(self, lang: str) -> None:
        _check_lang(lang)
        self.lang: Final = lang
        self._index = message_index()
        self._gnu = {domain: _translations(lang, domain) for domain in DOMAINS}
        self._ranks = {rank: self.t(key) for rank, key in _RANK_KEYS.items()}

    def __repr__(self) -> str:
        return f"Translator({self.lang!r})"

    def _info(self, key: str, plural: bool) -> MessageInfo:
        info = self._index.get(key)
        if info is None:
            raise UnknownMessageError(f"unknown message id {key!r} (not in the English catalogues)")
        if info.plural != plural:
            use = "n()" if info.plural else "t()"
            raise MessageArgumentsError(
                f"message {key!r} is {'' if info.plural else 'not '}a plural message: use {use}"
            )
        return info

    def _format(
        self,
        key: str,
        info: MessageInfo,
        kwargs: dict[str, Arg],
        implicit: frozenset[str],
        lookup: Callable[[gettext.NullTranslations], str],
    ) -> Html:
        given = set(kwargs) | implicit
        expected = info.fields | implicit
        if given != expected:
            missing = ", ".join(sorted(expected - given)) or "none"
            extra = ", ".join(sorted(given - expected)) or "none"
            raise MessageArgumentsError(
                f"message {key!r} takes {sorted(info.fields - implicit)}; "
                f"missing: {missing}; unexpected: {extra}"
            )
        values = {name: _render(value, key, name) for name, value in kwargs.items()}
        try:
            return Html(lookup(self._gnu[info.domain]).format(**values))
        except (KeyError, IndexError, ValueError):
            if self.lang == DEFAULT:
                raise
            # A broken translation (the tests catch these) falls back to English.
            return Html(lookup(_translations(DEFAULT, info.domain)).format(**values))

    def t(self, key: str, **kwargs: Arg) -> Html:
        """The message ``key``, its ``{placeholders}`` filled (str values HTML-escaped)."""
        info = self._info(key, plural=False)
        return self._format(key, info, kwargs, frozenset(), lambda g: g.gettext(key))

    def n(self, key: str, count: int, **kwargs: Arg) -> Html:
        """The plural message ``key`` in the form for ``count`` (also given as ``{count}``)."""
        info = self._info(key, plural=True)
        if isinstance(count, bool) or not isinstance(count, int):
            raise MessageArgumentsError(f"message {key!r}: count must be an int, not {count!r}")
        kwargs = {**kwargs, "count": count}
        return self._format(
            key, info, kwargs, frozenset({"count"}), lambda g: g.ngettext(key, key, count)
        )

    def rank(self, rank: int) -> str:
        """The rank as printed on a card here: ``10``, ``Q`` (German ``D``), ``A``."""
        return self._ranks.get(rank) or str(rank)

    def card(self, card: Card) -> str:
        """Localised rank + suit symbol: ``10♥``, ``Q♣`` (German ``D♣``)."""
        return self.rank(card.rank) + card.suit.symbol

    def cards(self, cards: Iterable[Card]) -> str:
        """The cards, space separated, in the given order."""
        return " ".join(self.card(c) for c in cards)


@cache
def translator(lang: str) -> Translator:
    """The (cached) ``Translator`` of a supported language; ``ValueError`` otherwise."""
    return Translator(lang)


def language_name(lang: str) -> str:
    """The language's own name (endonym) for the language picker: ``Español``."""
    _check_lang(lang)
    name = str(Locale.parse(lang).get_display_name(lang))
    return name[:1].upper() + name[1:]
