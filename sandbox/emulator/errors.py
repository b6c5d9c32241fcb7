"""Errors: Telegram's exact error texts, the Bot API error, and control-API misuse."""

from __future__ import annotations

from sandbox.emulator.types import JsonDict

# Telegram's exact error texts; bots match on them, so they must not drift.
ERR_UNAUTHORIZED = "Unauthorized"
ERR_NOT_FOUND = "Not Found"
ERR_CHAT_NOT_FOUND = "Bad Request: chat not found"
ERR_CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
ERR_BLOCKED = "Forbidden: bot was blocked by the user"
ERR_BOT_TO_BOT = "Forbidden: bot can't send messages to bots"
ERR_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
ERR_EDIT_NOT_FOUND = "Bad Request: message to edit not found"
ERR_DELETE_NOT_FOUND = "Bad Request: message to delete not found"
ERR_CANT_EDIT = "Bad Request: message can't be edited"
ERR_CANT_DELETE = "Bad Request: message can't be deleted"
ERR_TEXT_EMPTY = "Bad Request: message text is empty"
ERR_TOO_LONG = "Bad Request: message is too long"
ERR_BUTTON_DATA = "Bad Request: BUTTON_DATA_INVALID"
ERR_PARSE_ENTITIES = "Bad Request: can't parse entities: "
ERR_QUERY_INVALID = (
    "Bad Request: query is too old and response timeout expired or query ID is invalid"
)
ERR_REPLY_NOT_FOUND = "Bad Request: message to be replied not found"
ERR_MARKUP_JSON = "Bad Request: can't parse reply keyboard markup JSON object"
ERR_TEXT_BUTTONS = (
    "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the "
    "inline keyboard"
)
ERR_WEBHOOK_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to "
    "delete the webhook first"
)
ERR_POLL_CONFLICT = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance "
    "is running"
)
ERR_PIN_RIGHTS = "Bad Request: not enough rights to manage pinned messages in the chat"
ERR_MIGRATED = "Bad Request: group chat was upgraded to a supergroup chat"
ERR_NO_SEND_RIGHTS = "Bad Request: not enough rights to send text messages to the chat"

# Forum topics: Bot API server (telegram-bot-api Client.cpp: check_message_topic) and
# TDLib (ForumTopicManager.cpp); TOPIC_* are Telegram server errors passed through.
ERR_THREAD_NOT_FOUND = "Bad Request: message thread not found"
ERR_TOPIC_CLOSED = "Bad Request: TOPIC_CLOSED"
ERR_TOPIC_ID_INVALID = "Bad Request: TOPIC_ID_INVALID"
ERR_TOPIC_NOT_MODIFIED = "Bad Request: TOPIC_NOT_MODIFIED"
ERR_NOT_FORUM = "Bad Request: the chat is not a forum"
ERR_TOPIC_NAME_EMPTY = "Bad Request: name must be non-empty"
ERR_TOPIC_CREATE_RIGHTS = "Bad Request: not enough rights to create a topic"
ERR_TOPIC_EDIT_RIGHTS = "Bad Request: not enough rights to edit the topic"
ERR_TOPIC_CLOSE_RIGHTS = "Bad Request: not enough rights to close or open the topic"
ERR_TOPIC_DELETE_RIGHTS = "Bad Request: not enough rights to delete the topic"

# Ephemeral messages (Bot API 10.2). Telegram documents the rules but not these texts;
# they are the Telegram server errors for the same conditions (see sandbox/README.md).
ERR_EPHEMERAL_NOT_ADMIN = "Bad Request: CHAT_ADMIN_REQUIRED"
ERR_EPHEMERAL_PEER = "Bad Request: PEER_ID_INVALID"
ERR_EPHEMERAL_TO_BOT = "Bad Request: USER_IS_BOT"
ERR_EPHEMERAL_NOT_MEMBER = "Bad Request: USER_NOT_PARTICIPANT"
ERR_USER_NOT_FOUND = "Bad Request: user not found"


class ApiError(Exception):
    """A Bot API failure, rendered exactly as Telegram renders it."""

    def __init__(
        self,
        error_code: int,
        description: str,
        retry_after: int | None = None,
        *,
        migrate_to_chat_id: int | None = None,
    ):
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after
        self.migrate_to_chat_id = migrate_to_chat_id

    def to_json(self) -> JsonDict:
        body: JsonDict = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        parameters: JsonDict = {}
        if self.retry_after is not None:
            parameters["retry_after"] = self.retry_after
        if self.migrate_to_chat_id is not None:
            parameters["migrate_to_chat_id"] = self.migrate_to_chat_id
        if parameters:
            body["parameters"] = parameters
        return body


def too_many_requests(retry_after: int) -> ApiError:
    return ApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)


class EmulatorError(Exception):
    """A control-API call that cannot happen in Telegram (unknown user, missing button, ...)."""


class NotFound(EmulatorError):
    """A control-API call naming something that does not exist (answered with 404)."""
