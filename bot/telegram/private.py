"""Any message in a private chat: the bot may write there, and a hand the Mini App
collapsed gets its buttons back."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.app.players import mark_dm_open
from bot.telegram.common import Services


async def private_message(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    user = update.effective_user
    if user is not None:
        await mark_dm_open(services.games.storage, user.id, user.full_name)


async def back_in_chat(
    services: Services, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    """Writing to the bot while the Mini App collapsed the hand: its buttons come back."""
    games, user = services.games, update.effective_user
    buttons = games.app_buttons
    if buttons is not None and user is not None:
        place = await buttons.back_in_chat(user.id)  # the game's, named by the presence
        if place is not None:
            games.box.refresh_hand(place, user.id)
