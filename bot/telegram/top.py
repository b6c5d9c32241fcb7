"""/top: this month's leaderboard. In a group, the group's (with a button for the one
over all groups; ``/top all`` says the same); in private, the one over all groups."""

from __future__ import annotations

from telegram import Chat, Update
from telegram.ext import ContextTypes

from bot.domain.callbacks import TopButton
from bot.domain.flow import FlowError
from bot.render import Rendered
from bot.render import rating as rating_text
from bot.telegram.common import Services, Toast, is_private, place_of
from bot.telegram.taps import Tap
from locales import Translator

OVERALL_ARGS = frozenset({"all", "overall", "global"})
"""``/top all``: the board over all groups, from a group."""
CHART_PATH = "rating"
"""The Mini App's rating chart page, under its base URL."""


def chart_url(services: Services) -> str | None:
    """The Mini App's rating chart, when the bot serves the Mini App."""
    buttons = services.games.app_buttons
    return None if buttons is None else f"{buttons.base_url.rstrip('/')}/{CHART_PATH}"


async def board_for(services: Services, chat: Chat, tr: Translator, *, overall: bool) -> Rendered:
    """The leaderboard a /top (or its button) shows in ``chat``."""
    ratings = services.games.screens.ratings
    private = is_private(chat)
    if not (overall or private) and not await ratings.rated_here(chat.id):
        return rating_text.rating_off(tr)
    board = await ratings.board(None if overall or private else chat.id)
    content = rating_text.top_message(board, tr, overall_button=not (overall or private))
    url = chart_url(services) if private else None
    return content if url is None else rating_text.with_chart_button(content, url, tr)


async def top(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, place = update.effective_chat, update.effective_user, place_of(update)
    if chat is None or user is None or place is None:
        return
    tr = await services.reply_language(chat, user)
    overall = any(arg.lower() in OVERALL_ARGS for arg in context.args or ())
    services.games.box.say(place, await board_for(services, chat, tr, overall=overall))


async def top_tap(services: Services, tap: Tap, button: TopButton) -> Toast:
    """The button under a group's /top: the board over all groups, as a new message in
    that chat (in the group's language)."""
    message = tap.query.message
    if message is None or tap.place is None:
        raise FlowError("toast.stale")
    chat = message.chat
    if is_private(chat):
        tr = await tap.tapper_language()
    else:
        tr = await services.games.languages.group(chat.id)
    services.games.box.say(tap.place, await board_for(services, chat, tr, overall=button.overall))
    return None
