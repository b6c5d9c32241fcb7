"""Ways into the Mini App: the private hand's ``web_app`` button and the group's link."""

from __future__ import annotations

from collections.abc import Callable

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

from bot.domain import callbacks, flow
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.render import Rendered
from bot.render.common import place_title
from bot.render.labels import pack
from bot.store.presence import Presence
from locales import Translator, visible_text


def app_url(base_url: str, game_id: str) -> str:
    """The page for one game: always ``…/?game=`` so relative URLs resolve under it."""
    return f"{base_url.rstrip('/')}/?game={game_id}"


def group_link(bot_username: str, short_name: str, game_id: str) -> str:
    """A t.me link that opens the app registered as ``short_name`` on this game."""
    return f"https://t.me/{bot_username}/{short_name}?startapp={game_id}"


def _with_row(rendered: Rendered, button: InlineKeyboardButton) -> Rendered:
    rows = [list(row) for row in rendered.markup.inline_keyboard] if rendered.markup else []
    return Rendered(rendered.text, InlineKeyboardMarkup([[button], *rows]))


class AppButtons:
    """Adds the app's buttons to rendered messages (rendering itself stays unaware)."""

    def __init__(self, base_url: str, short_name: str | None, presence: Presence) -> None:
        self.base_url = base_url
        self.short_name = short_name
        self.presence = presence

    async def hand(
        self,
        table: ChatGame,
        seat: int,
        tr: Translator,
        full: Callable[[], Rendered],
        in_app: bool | None = None,
    ) -> Rendered:
        """The hand message (``full()`` renders it) with an "Open table" button; while its
        owner has the app open (``in_app``, when the caller knows), just that button: the
        same text every move, so the outbox never edits it, and the full hand is not even
        rendered."""
        if table.state is None or table.phase not in ("playing", "finished"):
            return full()
        url = app_url(self.base_url, table.game_id)
        label = visible_text(str(tr.t("app.open_table")))
        button = InlineKeyboardButton(label, web_app=WebAppInfo(url))
        user_id = table.seats[seat].user_id
        if in_app is None and table.phase == "playing" and user_id is not None:
            in_app = await self.presence.in_app(table.place, user_id)
        if user_id is not None and user_id == flow.reminded_user(table):
            in_app = False  # the reminder shows the whole hand, whichever way they play
        if in_app and table.phase == "playing" and user_id is not None:
            text = tr.t("app.in_app", group=place_title(table, tr))
            # No step in its data: the collapsed message must stay the same every move.
            data = callbacks.encode_hand_op(table.place, table.game_id, 0, "play_here")
            here = InlineKeyboardButton(
                visible_text(str(tr.t("app.play_here"))), callback_data=data
            )
            return Rendered(text, InlineKeyboardMarkup(pack([button, here], 2)))
        return _with_row(full(), button)

    async def back_in_chat(self, user_id: int, place: Place | None = None) -> Place | None:
        """The user acts in the private chat: the place of the game whose hand should show
        its buttons again (the app stops collapsing it until it is opened again), or None."""
        return await self.presence.back_in_chat(user_id, place)

    def group(
        self, table: ChatGame, rendered: Rendered, tr: Translator, bot_username: str
    ) -> Rendered:
        # web_app buttons are refused in groups: a t.me link to the registered app instead.
        if self.short_name is None or table.phase != "playing":
            return rendered
        url = group_link(bot_username, self.short_name, table.game_id)
        label = visible_text(str(tr.t("app.open_table")))
        return _with_row(rendered, InlineKeyboardButton(label, url=url))
