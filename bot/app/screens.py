"""What each message of a game shows, with the data rendering needs (languages, hand
modes, who can be written to, the Mini App's buttons). The outbox calls these."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot import render
from bot.app.language import Languages
from bot.app.ratings import Ratings
from bot.domain.hand_modes import HandModes
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.output.app_buttons import AppButtons
from bot.render import Rendered
from bot.store.storage import Storage
from engine import Card
from locales import Translator


@dataclass
class BotName:
    """The bot's username, learned from Telegram at start (links name it)."""

    username: str = "bot"


async def unreachable(storage: Storage, game: ChatGame) -> set[int]:
    """The seated people the bot cannot write to in private (their user ids)."""
    users = set()
    for seat in game.seats:
        if seat.human and seat.user_id is not None:
            record = await storage.user(seat.user_id)
            if not record.dm_open:
                users.add(seat.user_id)
    return users


class Screens:
    def __init__(
        self,
        storage: Storage,
        languages: Languages,
        name: BotName,
        *,
        app_buttons: AppButtons | None = None,
        ratings: Ratings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.languages = languages
        self.name = name
        self.app_buttons = app_buttons
        self.clock = clock
        self.ratings = ratings if ratings is not None else Ratings(storage, clock=clock)
        self.modes = HandModes()
        """Each hand's transient mode (picking a beat target, confirming Leave)."""

    async def group(self, game: ChatGame) -> Rendered:
        """The group's message of ``game``: its lobby, its table or "cancelled"."""
        tr = await self.languages.group(game.place.chat_id)
        bot_username = self.name.username
        if game.phase == "lobby":
            unseen = await unreachable(self.storage, game)
            return render.lobby_message(game, tr, bot_username, unseen)
        if game.phase == "cancelled":
            return render.cancelled(tr)
        rendered = render.table_message(game, tr, bot_username, now=self.clock())
        if self.app_buttons is not None:
            rendered = self.app_buttons.group(game, rendered, tr, bot_username)
        return rendered

    async def hand(self, game: ChatGame, seat: int, in_app: bool | None = None) -> Rendered:
        """``seat``'s private hand message, in its mode (and the Mini App's buttons)."""
        return await self._hand(game, seat, self.app_buttons, in_app)

    async def group_hand(self, game: ChatGame, seat: int) -> Rendered:
        """``seat``'s hand as an ephemeral message in the group: the same text and hand
        buttons, without the Mini App's (Telegram refuses ``web_app`` buttons in groups)."""
        return await self._hand(game, seat, None, None)

    async def _hand(
        self, game: ChatGame, seat: int, app_buttons: AppButtons | None, in_app: bool | None
    ) -> Rendered:
        info = game.seats[seat]
        tr = await self.languages.person(info.user_id, info.lang)
        if game.phase == "finished" and game.state is not None:
            return await self.finished_hand(game, seat, tr)
        if game.phase == "cancelled":
            return render.hand_gone(game, tr)
        if info.left:
            return render.hand_closed(game, tr, seat)
        mode = self.modes.current(game, info.user_id) if info.user_id is not None else None
        pick = Card(mode[1]) if mode is not None and mode[0] == "pick" else None

        def full() -> Rendered:
            return render.hand_message(
                game,
                seat,
                tr,
                pick=pick,
                confirm_leave=mode is not None and mode[0] == "leave",
                now=self.clock(),
            )

        if app_buttons is not None:
            return await app_buttons.hand(game, seat, tr, full, in_app)
        return full()

    async def finished_hand(self, game: ChatGame, seat: int, tr: Translator) -> Rendered:
        """The player's own result and rating change: no table to open, no moves."""
        rating = await self.ratings.game_line(game, game.seats[seat].user_id)
        return render.finished_hand(game, seat, tr, rating, self.ratings.min_games)

    async def note(self, place: Place, note: dict[str, Any]) -> Rendered | None:
        """A one-off group message a change owes (an announcement, the results)."""
        tr = await self.languages.group(place.chat_id)
        if note.get("kind") == "announce":
            return Rendered(tr.t(str(note["key"]), **note.get("kwargs", {})))
        if note.get("kind") == "results":
            game = await self.storage.load_table(place)
            # A game the group has moved on from (a rematch started) is not announced late.
            if game is not None and game.game_id == note.get("game_id"):
                return render.results_message(game, tr)
        return None
