"""The Mini App's rating chart: the asker's rating history as the page draws it.

Only the asker's own history, and only what the chart needs: no group ids, no names.
Numbers and months come formatted in the asker's language, as the chat shows them."""

from __future__ import annotations

from bot.domain.records import RatingHistoryEntry
from bot.render.rating import number, season_name, signed
from bot.webapp.state import JsonDict
from locales import Translator, visible_text


def rating_body(history: list[RatingHistoryEntry], tr: Translator) -> JsonDict:
    """``history`` oldest first: each game's rating over all groups in its season, and
    the page's texts."""
    points = [
        {
            "at": entry.finished_at,
            "season": entry.season,
            "season_name": season_name(entry.season, tr),
            "before": entry.overall_before,
            "after": entry.overall_after,
        }
        for entry in history
    ]
    texts: JsonDict = {
        "title": visible_text(tr.t("rating.app_title")),
        "subtitle": visible_text(tr.t("rating.app_subtitle")),
        "empty": visible_text(tr.t("rating.app_empty")),
    }
    current: JsonDict | None = None
    if history:
        last = history[-1]
        in_season = sum(1 for entry in history if entry.season == last.season)
        current = {
            "rating": last.overall_after,
            "shown": number(last.overall_after, tr),
            "season_name": season_name(last.season, tr),
            "games": visible_text(tr.n("rating.games", in_season)),
            "last": visible_text(
                tr.t("rating.app_last", delta=signed(last.overall_after - last.overall_before, tr))
            ),
        }
    return {"lang": tr.lang, "points": points, "current": current, "texts": texts}
