"""The Bot API method table and one call's path: token, injected faults, method, answer."""

from __future__ import annotations

import asyncio

from sandbox.emulator.bot_api import (
    Handler,
    chats,
    ephemeral,
    forum,
    messaging,
    receiving,
    settings,
)
from sandbox.emulator.errors import ERR_NOT_FOUND, ERR_UNAUTHORIZED, ApiError
from sandbox.emulator.params import Params
from sandbox.emulator.types import JsonDict
from sandbox.emulator.world import World

METHODS: dict[str, Handler] = {
    "getMe": receiving.get_me,
    "getUpdates": receiving.get_updates,
    "setWebhook": receiving.set_webhook,
    "deleteWebhook": receiving.delete_webhook,
    "getWebhookInfo": receiving.get_webhook_info,
    "logOut": receiving.ok_true,
    "close": receiving.ok_true,
    "sendMessage": messaging.send_message,
    "editMessageText": messaging.edit_message_text,
    "editMessageReplyMarkup": messaging.edit_message_reply_markup,
    "deleteMessage": messaging.delete_message,
    "deleteMessages": messaging.delete_messages,
    "answerCallbackQuery": messaging.answer_callback_query,
    "editEphemeralMessageText": ephemeral.edit_ephemeral_message_text,
    "editEphemeralMessageReplyMarkup": ephemeral.edit_ephemeral_message_reply_markup,
    "deleteEphemeralMessage": ephemeral.delete_ephemeral_message,
    "createForumTopic": forum.create_forum_topic,
    "editForumTopic": forum.edit_forum_topic,
    "closeForumTopic": forum.close_forum_topic,
    "reopenForumTopic": forum.reopen_forum_topic,
    "deleteForumTopic": forum.delete_forum_topic,
    "getForumTopicIconStickers": forum.get_forum_topic_icon_stickers,
    "getChat": chats.get_chat,
    "getChatMember": chats.get_chat_member,
    "getChatAdministrators": chats.get_chat_administrators,
    "getChatMemberCount": chats.get_chat_member_count,
    "sendChatAction": chats.send_chat_action,
    "pinChatMessage": chats.pin_chat_message,
    "unpinChatMessage": chats.unpin_chat_message,
    "unpinAllChatMessages": chats.unpin_all_chat_messages,
    "setMyCommands": settings.set_my_commands,
    "getMyCommands": settings.get_my_commands,
    "deleteMyCommands": settings.delete_my_commands,
    "setChatMenuButton": settings.set_chat_menu_button,
    "getChatMenuButton": settings.get_chat_menu_button,
    "setMyName": settings.setting_setter("name"),
    "getMyName": settings.setting_getter("name"),
    "setMyDescription": settings.setting_setter("description"),
    "getMyDescription": settings.setting_getter("description"),
    "setMyShortDescription": settings.setting_setter("short_description"),
    "getMyShortDescription": settings.setting_getter("short_description"),
    "setMyDefaultAdministratorRights": receiving.ok_true,
}
# Telegram matches method names case-insensitively.
_CANONICAL = {name.lower(): name for name in METHODS}


async def call_method(w: World, token: str, method: str, p: Params) -> tuple[int, JsonDict]:
    """Run one Bot API call; returns (HTTP status, Telegram-shaped JSON body).

    An injected error answers instead of the method (no effect). An injected slow answer
    lets the method take effect at once and holds back only the HTTP answer.
    """
    b = w.registry.bot_by_token(token)
    if b is None:
        return 401, ApiError(401, ERR_UNAUTHORIZED).to_json()
    name = _CANONICAL.get(method.lower())
    chat_id = p.chat_id_or_none()
    w.stats.record(name or method, chat_id)
    w.events.touch()  # lets tests wait_for() a call to arrive
    delay: float | None = None
    try:
        if name is None:
            raise ApiError(404, ERR_NOT_FOUND)
        fault = w.faults.take_error(name, chat_id)
        if fault is not None:
            raise fault
        delay = w.faults.take_delay(name, chat_id)
        status, body = 200, {"ok": True, "result": await METHODS[name](w, b, p)}
    except ApiError as err:
        w.stats.record_error(err.error_code)
        status, body = err.error_code, err.to_json()
    if delay is not None:
        w.stats.delayed_answers += 1
        # A client that gives up meanwhile cancels this wait; the effect stays.
        await asyncio.sleep(delay)
    return status, body
