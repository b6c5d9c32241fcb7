"""/stats answers: a group's table of members, or one user's totals."""

from __future__ import annotations

from bot.domain.names import short_name
from bot.domain.records import StatLine
from bot.render.common import Rendered
from locales import Html, Translator

MAX_STAT_LINES = 50


def group_stats(lines: list[StatLine], tr: Translator) -> Rendered:
    if not lines:
        return Rendered(tr.t("stats.none"))
    # Ranked by how rarely each one ends as the durak; more games break a tie.
    ordered = sorted(lines, key=lambda s: (durak_rate(s), -s.played, s.name))
    out = [tr.t("stats.title")]
    for rank, s in enumerate(ordered[:MAX_STAT_LINES], 1):
        row = tr.n(
            "stats.row",
            s.played,
            rank=rank,
            name=short_name(s.name),
            durak=s.durak,
            rate=round(100 * durak_rate(s)),
        )
        out.append(Html(row + " · " + tr.t("stats.row_first", first=s.first)))
    return Rendered("\n".join(out))


def durak_rate(line: StatLine) -> float:
    return line.durak / line.played if line.played else 0.0


def user_stats(line: StatLine, tr: Translator) -> Rendered:
    return Rendered(tr.t("stats.mine", played=line.played, durak=line.durak, first=line.first))
