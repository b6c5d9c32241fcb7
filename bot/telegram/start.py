"""/start: the greeting, and the lobby's deep link ``/start g<chat id>``."""

from __future__ import annotations

import re

from telegram import Update
from telegram.ext import ContextTypes

from bot.app.players import mark_dm_open
from bot.telegram.common import Services, is_private

GROUP_LINK_RE = re.compile(r"g(-?[0-9]{1,20})")
"""``/start g<chat id>``: the lobby's button for players who must open this chat."""


async def start(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, message = update.effective_chat, update.effective_user, update.message
    if chat is None or user is None or message is None:
        return
    tr = await services.reply_language(chat, user)
    if not is_private(chat):
        services.say(chat.id, tr.t("start.group"))
        return
    games = services.games
    await mark_dm_open(games.storage, user.id, user.full_name)
    payload = context.args[0] if context.args else ""
    # Anything else (a forged or mistyped payload) gets the plain greeting.
    if link := GROUP_LINK_RE.fullmatch(payload):
        group_id = int(link[1])
        game = await games.storage.load_table(group_id)
        # Only a member learns which group it is: the title is not for strangers.
        if game is not None and await services.members.is_member(group_id, user.id, context.bot):
            services.say(chat.id, tr.t("start.linked", group=game.chat_title))
            games.box.refresh(game)
            return
    services.say(chat.id, tr.t("start.private"))
