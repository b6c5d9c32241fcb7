"""/stats answers: a group's table of members, or one user's totals."""

from __future__ import annotations

from bot.names import short_name
from bot.records import StatLine
from bot.render.common import Rendered
from locales import Translator

MAX_STAT_LINES = 50


def group_stats(lines: list[StatLine], tr: Translator) -> Rendered:
    if not lines:
        return Rendered(tr.t("stats.none"))
    ordered = sorted(lines, key=lambda s: (-s.played, s.durak, -s.first, s.name))
    out = [tr.t("stats.title")]
    for s in ordered[:MAX_STAT_LINES]:
        name = short_name(s.name)
        out.append(tr.t("stats.line", name=name, played=s.played, durak=s.durak, first=s.first))
    return Rendered("\n".join(out))


def user_stats(line: StatLine, tr: Translator) -> Rendered:
    return Rendered(tr.t("stats.mine", played=line.played, durak=line.durak, first=line.first))
