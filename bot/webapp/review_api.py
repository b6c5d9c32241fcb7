"""The Mini App's side of the Hard player's review: ask for it, and see its moments.

``GET /api/review?game=<id>[&chat=<id>]``: for a finished game the user played, the
stored review and, at each reviewed decision, that player's own view then (their hand,
the table, the trump, the counts: ``engine.view``, never a hidden card). Before there is
a result: just its status and the button's label. ``POST /api/review {game}`` asks for
it as the 🔍 button does (the answer's ``text`` says what became of it; ``queued``:
the review is on its way, worth asking for again in a few seconds).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.app.games import Games
from bot.app.reviews import Reviews
from bot.domain.place import Place
from bot.domain.review import ReviewResult, ReviewSubject, player_points
from bot.render import review as render
from bot.render.common import computer_name
from bot.webapp.hub import Hub
from bot.webapp.initdata import WebAppUser
from bot.webapp.responses import json_error, json_ok
from bot.webapp.state import JsonDict, plain
from engine import Card, PlayerView
from locales import Translator


def card_json(card: Card, tr: Translator) -> JsonDict:
    return {"card": str(card), "rank": tr.rank(card.rank), "suit": card.suit.symbol}


def view_json(v: PlayerView, subject: ReviewSubject, tr: Translator) -> JsonDict:
    """The player's view at one decision: only what they could see then."""

    def name(seat: int) -> str:
        level = subject.levels[seat] if seat < len(subject.levels) else None
        if level is not None:
            nth = sum(1 for other in subject.levels[:seat] if other is not None)
            return plain(computer_name(level, nth, tr))
        return subject.names[seat] if seat < len(subject.names) else str(seat + 1)

    return {
        "hand": [card_json(c, tr) for c in v.hand],
        "table": [[card_json(a, tr), None if d is None else card_json(d, tr)] for a, d in v.table],
        "trump": card_json(v.trump_card, tr),
        "stock": v.stock_count,
        "discard": v.discard_count,
        "players": [
            {"name": name(s), "cards": v.hand_sizes[s], "me": s == v.player}
            for s in range(v.num_players)
        ],
    }


def moments_json(
    subject: ReviewSubject, seat: int, result: ReviewResult, tr: Translator
) -> list[JsonDict]:
    points = {p.number: p for p in player_points(subject, seat)}
    out = []
    for m in result.moments:
        v = points[m.number].view
        out.append(
            {
                "number": m.number,
                "bout": m.bout + 1,
                "line": plain(render.moment_line(tr, m)),
                "taken": str(m.taken),
                "best": str(m.best),
                "durak_taken": render.percent(m.durak_taken),
                "durak_best": render.percent(m.durak_best),
                "view": view_json(v, subject, tr),
            }
        )
    return out


class ReviewApi:
    def __init__(self, games: Games, hub: Hub, reviews: Reviews) -> None:
        self.games = games
        self.hub = hub
        self.reviews = reviews

    async def _find(
        self, user: WebAppUser, game_id: str, chat: str | None
    ) -> tuple[ReviewSubject, int, Translator] | web.Response:
        place = _place(chat)
        if place is None:
            place = await self.hub.place_of(game_id, fresh=True) if game_id else None
        subject = await self.reviews.subject(place, game_id) if place is not None else None
        if subject is None:
            return json_error(404, "no such game")
        seat = subject.seat_of(user.user_id)
        if seat is None:
            return json_error(403, "not seated")
        tr = await self.games.languages.person(user.user_id, user.language_code)
        return subject, seat, tr

    async def show(self, user: WebAppUser, query: Any) -> web.Response:
        found = await self._find(user, str(query.get("game", "")), query.get("chat"))
        if isinstance(found, web.Response):
            return found
        subject, seat, tr = found
        result = await self.reviews.store.result(subject.place, subject.game_id, user.user_id)
        body: JsonDict = {
            "game": subject.game_id,
            "chat": subject.place.text,
            "status": "none" if result is None else "done",
            "texts": {
                "button": plain(tr.t("review.button")),
                "title": plain(tr.t("review.app_title")),
                "hand": plain(tr.t("review.app_hand")),
                "table": plain(tr.t("review.app_table")),
                "trump": plain(tr.t("app.trump")),
                "stock": plain(tr.t("app.stock")),
                "empty": plain(tr.t("table.empty")),
            },
        }
        if result is not None:
            group = subject.title or str(subject.place.chat_id)
            body["heading"] = plain(tr.n("review.title", result.decisions, group=group))
            body["none"] = plain(tr.t("review.none"))
            body["moments"] = moments_json(subject, seat, result, tr)
        return json_ok(body)

    async def ask(self, user: WebAppUser, data: JsonDict) -> web.Response:
        chat = data.get("chat")
        found = await self._find(user, str(data["game"]), None if chat is None else str(chat))
        if isinstance(found, web.Response):
            return found
        subject, _, tr = found
        key = await self.reviews.request(
            subject.place, subject.game_id, user.user_id, tr, resend=False
        )
        text = (
            plain(tr.t(key))
            if key is not None
            else plain(render.progress(tr, subject.title or str(subject.place.chat_id), 0, 0).text)
        )
        running = key is None or key == "review.running"
        return json_ok({"game": subject.game_id, "queued": running, "text": text})


def _place(text: str | None) -> Place | None:
    """The place a request names (``Place.text``), or None: none, or not a place."""
    if not text:
        return None
    try:
        return Place.parse(text)
    except ValueError:
        return None
