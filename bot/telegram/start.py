"""/start: the greeting, and the lobby's deep link ``/start g<place>``
(``callbacks.encode_group_link``; an old link's ``g<chat id>`` names the chat's place)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.app.players import mark_dm_open
from bot.domain.callbacks import decode_group_link
from bot.render.common import place_title
from bot.telegram.common import Services, is_private, place_of


async def start(services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    chat, user, message = update.effective_chat, update.effective_user, update.message
    here = place_of(update)
    if chat is None or user is None or message is None or here is None:
        return
    tr = await services.reply_language(chat, user)
    if not is_private(chat):
        services.say(here, tr.t("start.group"))
        return
    games = services.games
    await mark_dm_open(games.storage, user.id, user.full_name)
    payload = context.args[0] if context.args else ""
    # Anything else (a forged or mistyped payload) gets the plain greeting.
    if (place := decode_group_link(payload)) is not None:
        game = await games.storage.load_table(place)
        # Only a member learns which group it is: the title is not for strangers.
        members = services.members
        if game is not None and await members.is_member(place.chat_id, user.id, context.bot):
            services.say(here, tr.t("start.linked", group=place_title(game, tr)))
            games.box.refresh(game)
            return
    services.say(here, tr.t("start.private"))
