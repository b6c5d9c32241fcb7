"""The ``/rules`` text and the lobby's short "how to play", built from the ``rules`` domain.

The text follows the options of one game (``engine.Rules``): each section or sentence is
a message of the ``rules`` catalogue, picked by the options and filled with the numbers
of the engine (hand size, bout limits, lowest trump rank…). The result is split into
Telegram messages on section boundaries.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

from babel.numbers import format_decimal

from engine.cards import LOWEST_RANK
from engine.rules import (
    FIRST_BOUT_MAX_CARDS,
    HAND_SIZE,
    MAX_BOUT_CARDS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Rules,
)
from locales.i18n import Html, Translator, translator

MAX_MESSAGE_LENGTH: Final = 4096
"""Telegram's limit for one message, counted on the visible text after entity parsing."""

_TAG: Final = re.compile(r"<[^>]*>")
_ENTITY: Final = re.compile(r"&(#[0-9]+|#[xX][0-9a-fA-F]+|lt|gt|amp|quot);")
_ACE: Final = 14


def visible_text(source: str) -> str:
    """The text Telegram shows for an HTML message: tags dropped, entities decoded."""
    return _ENTITY.sub(lambda m: html.unescape(m.group(0)), _TAG.sub("", source))


def telegram_length(source: str) -> int:
    """Length of an HTML message as Telegram limits it: the larger of the raw and the
    visible text, in UTF-16 code units (Telegram's unit; never less than characters)."""
    return max(_utf16(source), _utf16(visible_text(source)))


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def split_messages(
    parts: Sequence[str], limit: int = MAX_MESSAGE_LENGTH, separator: str = "\n\n"
) -> list[str]:
    """Pack ``parts`` (e.g. sections) into as few messages within ``limit`` as possible.

    Parts stay whole and in order; a part longer than the limit is itself split at line
    breaks. ``ValueError`` if a single line is over the limit.
    """
    messages: list[str] = []
    current = ""
    for part in parts:
        for piece in _fit(part, limit):
            joined = f"{current}{separator}{piece}" if current else piece
            if telegram_length(joined) <= limit:
                current = joined
            else:
                messages.append(current)
                current = piece
    if current:
        messages.append(current)
    return messages


def _fit(part: str, limit: int) -> list[str]:
    if telegram_length(part) <= limit:
        return [part]
    pieces: list[str] = []
    current = ""
    for line in part.split("\n"):
        if telegram_length(line) > limit:
            raise ValueError(f"a line of {telegram_length(line)} characters exceeds {limit}")
        joined = f"{current}\n{line}" if current else line
        if telegram_length(joined) <= limit:
            current = joined
        else:
            pieces.append(current)
            current = line
    if current:
        pieces.append(current)
    return pieces


def _section(title: Html, *blocks: str) -> str:
    return "\n".join((title, *blocks))


@dataclass(frozen=True)
class TablePace:
    """How the bot runs a table, as /rules tells it: the lobby's pace and its clocks."""

    name: str = "normal"
    """The pace option's value: relaxed, normal or fast."""
    turn_timeout: float = 60.0
    throw_in_window: float = 7.0


Section = Literal["goal", "bout", "beating", "taking", "options", "ending"]
SECTIONS: Final[tuple[Section, ...]] = ("goal", "bout", "beating", "taking", "options", "ending")
"""The parts of the full rules that /rules offers a button for, in reading order."""


def pace_line(tr: Translator, pace: TablePace) -> Html:
    """ "• Pace: fast (30 s per move, 3.5 s to throw in)", numbers in the language's style."""
    return tr.t(
        "rules.options.pace",
        pace=tr.t(f"option.pace_{pace.name}"),
        turn=format_decimal(pace.turn_timeout, locale=tr.lang),
        window=format_decimal(pace.throw_in_window, locale=tr.lang),
    )


class _RulesWriter:
    """Builds the sections for one language and one set of options."""

    def __init__(
        self,
        tr: Translator,
        rules: Rules,
        turn_timeout: int,
        max_timeouts: int,
        pace: TablePace | None = None,
    ):
        self.tr = tr
        self.rules = rules
        self.turn_timeout = turn_timeout
        self.max_timeouts = max_timeouts
        self.pace = pace or TablePace(turn_timeout=turn_timeout)
        self.low = tr.rank(LOWEST_RANK[rules.deck_size])

    def sections(self) -> list[str]:
        out = [self.overview(), self.cards(), self.deal(), self.bout()]
        if self.rules.transfer:
            out.append(self.transfer())
        out.append(self.drawing())
        if self.rules.trump_swap:
            out.append(self.swap())
        out.append(self.end())
        if self.rules.series_length > 1:
            out.append(self.series())
        out.append(self.bot())
        return out

    def section(self, name: Section) -> list[str]:
        """The parts of one section of the full rules (the /rules buttons)."""
        r = self.rules
        if name == "goal":
            return [_section(self.tr.t("rules.goal.title"), self.tr.t("rules.intro")), self.cards()]
        if name == "bout":
            return [self.bout(), self.drawing()]
        if name == "beating":
            return [self.beating(), *([self.transfer()] if r.transfer else [])]
        if name == "taking":
            return [self.taking(), self.drawing()]
        if name == "options":
            extras = [self.swap()] if r.trump_swap else []
            if r.series_length > 1:
                extras.append(self.series())
            return [self.options(), *extras, self.bot()]
        return [self.end(), *([self.series()] if r.series_length > 1 else [])]

    def beating(self) -> str:
        t = self.tr.t
        return _section(
            t("rules.beating.title"),
            t("rules.cards.trump"),
            t("rules.cards.beat"),
            t("rules.bout.defend"),
        )

    def taking(self) -> str:
        t = self.tr.t
        return _section(
            t("rules.taking.title"), t("rules.bout.take"), t("rules.bout.limit", max=MAX_BOUT_CARDS)
        )

    def options(self) -> str:
        return "\n".join((self.tr.t("rules.options.title"), *self.option_lines()))

    def overview(self) -> str:
        t = self.tr.t
        return "\n".join((t("rules.title"), t("rules.intro"), "", self.options()))

    def option_lines(self) -> list[str]:
        t, n, r = self.tr.t, self.tr.n, self.rules
        return [
            t("rules.options.players", min=MIN_PLAYERS, max=r.max_players),
            t("rules.options.deck", count=r.deck_size, low=self.low, ace=self.tr.rank(_ACE)),
            t(f"rules.options.variant.{r.variant}"),
            t(f"rules.options.throw_in.{r.throw_in}"),
            t(f"rules.options.multi_lead.{'on' if r.multi_card_lead else 'off'}"),
            t("rules.options.first_bout.on", first=FIRST_BOUT_MAX_CARDS)
            if r.first_bout_limit
            else t("rules.options.first_bout.off"),
            t("rules.options.swap.on", rank=self.low)
            if r.trump_swap
            else t("rules.options.swap.off"),
            n("rules.options.series.many", r.series_length)
            if r.series_length > 1
            else t("rules.options.series.single"),
            n("rules.options.timer", self.turn_timeout),
            pace_line(self.tr, self.pace),
        ]

    def cards(self) -> str:
        t, r, rank = self.tr.t, self.rules, self.tr.rank
        order = " ".join(rank(x) for x in range(LOWEST_RANK[r.deck_size], _ACE + 1))
        return _section(
            t("rules.cards.title"),
            t("rules.cards.deck", count=r.deck_size, low=self.low, ace=rank(_ACE), order=order),
            t("rules.cards.legend", jack=rank(11), queen=rank(12), king=rank(13), ace=rank(_ACE)),
            t("rules.cards.trump"),
            t("rules.cards.beat"),
        )

    def deal(self) -> str:
        t, r = self.tr.t, self.rules
        blocks = [t("rules.deal.cards", hand=HAND_SIZE)]
        whole_deck = r.deck_size // HAND_SIZE
        if whole_deck <= MAX_PLAYERS:
            blocks.append(t("rules.deal.no_stock", players=whole_deck))
        blocks.append(t("rules.deal.first", rank=self.low))
        if r.series_length > 1:
            blocks.append(t("rules.deal.later"))
        blocks.append(t("rules.deal.seats"))
        return _section(t("rules.deal.title"), *blocks)

    def bout(self) -> str:
        t, r = self.tr.t, self.rules
        blocks = [
            t("rules.bout.intro"),
            t("rules.bout.lead.multi" if r.multi_card_lead else "rules.bout.lead.single"),
            t("rules.bout.defend"),
            t(f"rules.bout.throw_in.{r.throw_in}"),
            t("rules.bout.limit", max=MAX_BOUT_CARDS),
        ]
        if r.first_bout_limit:
            blocks.append(t("rules.bout.first_limit", first=FIRST_BOUT_MAX_CARDS))
        blocks += [
            t("rules.bout.pass"),
            t("rules.bout.beaten"),
            t("rules.bout.take"),
        ]
        return _section(t("rules.bout.title"), *blocks)

    def transfer(self) -> str:
        t = self.tr.t
        return _section(
            t("rules.transfer.title"), t("rules.transfer.body"), t("rules.transfer.condition")
        )

    def drawing(self) -> str:
        t = self.tr.t
        return _section(t("rules.draw.title"), t("rules.draw.body", hand=HAND_SIZE))

    def swap(self) -> str:
        t = self.tr.t
        return _section(t("rules.swap.title"), t("rules.swap.body", rank=self.low))

    def end(self) -> str:
        t = self.tr.t
        return _section(
            t("rules.end.title"), t("rules.end.out"), t("rules.end.durak"), t("rules.end.draw")
        )

    def series(self) -> str:
        return _section(
            self.tr.t("rules.series.title"),
            self.tr.n("rules.series.body", self.rules.series_length),
        )

    def bot(self) -> str:
        t, n = self.tr.t, self.tr.n
        lines = [t("rules.bot.card"), t("rules.bot.beat"), t("rules.bot.take"), t("rules.bot.pass")]
        if self.rules.transfer:
            lines.append(t("rules.bot.transfer"))
        if self.rules.trump_swap:
            lines.append(t("rules.bot.swap", rank=self.low))
        lines.append(t("rules.bot.leave"))
        return _section(
            t("rules.bot.title"),
            t("rules.bot.lobby"),
            t("rules.bot.private"),
            *lines,
            n("rules.bot.timer", self.turn_timeout)
            + " "
            + n("rules.bot.takeover", self.max_timeouts),
            t("rules.bot.fair"),
        )


def rules_text(
    rules: Rules,
    lang: str,
    *,
    turn_timeout: int = 60,
    max_timeouts: int = 3,
    pace: TablePace | None = None,
    section: Section | None = None,
) -> list[str]:
    """The full rules of a game with ``rules``, in ``lang``, as Telegram HTML messages
    (or one ``section`` of them).

    Each message is within ``MAX_MESSAGE_LENGTH`` (raw and visible); messages break
    between sections. ``turn_timeout`` is the seconds per move, ``max_timeouts`` how many
    timeouts hand a seat to a computer player, ``pace`` the table's pace (normal, with
    ``turn_timeout``, when not given).
    """
    pace = pace or TablePace(turn_timeout=turn_timeout)
    return list(_rules_text(rules, lang, turn_timeout, max_timeouts, pace, section))


@lru_cache(maxsize=256)
def _rules_text(
    rules: Rules,
    lang: str,
    turn_timeout: int,
    max_timeouts: int,
    pace: TablePace,
    section: Section | None,
) -> tuple[str, ...]:
    writer = _RulesWriter(translator(lang), rules, turn_timeout, max_timeouts, pace)
    parts = writer.sections() if section is None else writer.section(section)
    return tuple(split_messages(parts))


SHORT_LIMIT: Final = 900
"""The short /rules stays within this many visible characters (a phone screen)."""


def rules_short(rules: Rules, lang: str, pace: TablePace | None = None) -> str:
    """The rules in brief: the goal, a bout, beating, taking, and this table's options
    (its pace: normal with the default clocks when not given)."""
    tr = translator(lang)
    t = tr.t
    low = tr.rank(LOWEST_RANK[rules.deck_size])
    options = [
        t("rules.options.deck", count=rules.deck_size, low=low, ace=tr.rank(_ACE)),
        t(f"rules.options.variant.{rules.variant}"),
        t(f"rules.options.throw_in.{rules.throw_in}"),
    ]
    if rules.trump_swap:
        options.append(t("rules.options.swap.on", rank=low))
    options.append(pace_line(tr, pace or TablePace()))
    return "\n".join((t("rules.short.title"), t("rules.short.body"), "", *options))


def how_to_play(lang: str) -> str:
    """The short "how to play" for the lobby (HTML, a few hundred characters)."""
    return translator(lang).t("rules.howto")
