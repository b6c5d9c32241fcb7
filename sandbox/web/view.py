"""What the sandbox page is shown: emulator messages and events as small JSON views.

Pure functions, no I/O. The page never receives the HTML the bot sent: only
``safe_html``, the emulator's own rendering of the parsed text and entities (every
character escaped, a fixed set of tags, link schemes allow-listed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from sandbox.emulator.types import JsonDict

ChatName = Literal["group", "private"]

_TELEGRAM_HOSTS = frozenset({"t.me", "www.t.me", "telegram.me", "www.telegram.me"})


def display_name(user: JsonDict) -> str:
    """A Telegram user's full name, as clients show it."""
    parts = [str(user[k]) for k in ("first_name", "last_name") if user.get(k)]
    return " ".join(parts) or str(user.get("id", "?"))


def button_view(button: JsonDict) -> JsonDict:
    """One inline button; kinds the sandbox cannot act on are shown but disabled."""
    text = str(button.get("text", ""))
    if "callback_data" in button:
        return {"text": text, "kind": "callback", "data": str(button["callback_data"])}
    if "url" in button:
        # The page sends the URL back to /_sandbox/open, which decides what it means.
        return {"text": text, "kind": "url", "url": str(button["url"])}
    web_app = button.get("web_app")
    if isinstance(web_app, dict) and isinstance(web_app.get("url"), str):
        return {"text": text, "kind": "web_app", "url": web_app["url"]}
    return {"text": text, "kind": "unsupported"}


def message_view(message: JsonDict, me: int, *, after: float | None = None) -> JsonDict:
    """An emulator message dict (``EmuMessage.to_dict()``) as the page renders it.

    Ephemeral messages (only this person sees them) get the key ``e<ephemeral id>`` and
    sort just after the history message ``after``; ``thread`` is the forum topic (0:
    General), ``order`` the position in the chat.
    """
    sender = message.get("from") or {}
    markup = message.get("reply_markup") or {}
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    keyboard = [
        [button_view(b) for b in row if isinstance(b, dict)]
        for row in (rows if isinstance(rows, list) else [])
        if isinstance(row, list)
    ]
    edits = int(message.get("edit_count") or 0)
    html = str(message.get("safe_html", ""))
    text = str(message.get("text", ""))
    if message.get("chat_id") == me and sender.get("id") == me and text.startswith("/start "):
        # Telegram apps show a deep link's /start without its payload.
        html, text = '<span class="tg-bot-command">/start</span>', "/start"
    ephemeral_id = message.get("ephemeral_message_id")
    message_id = int(message["message_id"])
    if ephemeral_id is not None:
        key = f"e{int(ephemeral_id)}"
        order = (after if after is not None else 0) + 0.5 + int(ephemeral_id) * 1e-6
    else:
        key, order = str(message_id), float(message_id)
    return {
        "id": message_id,
        "key": key,
        "order": order,
        "thread": int(message.get("message_thread_id") or 0),
        "ephemeral": ephemeral_id is not None,
        "ephemeral_id": int(ephemeral_id) if ephemeral_id is not None else None,
        "service": _service_text(message),
        "from": {
            "id": sender.get("id"),
            "name": display_name(sender),
            "is_bot": bool(sender.get("is_bot")),
        },
        "own": sender.get("id") == me,
        "html": html,
        "text": text,
        "buttons": keyboard,
        "version": edits,
        "edited": edits > 0,
        "date": message.get("date"),
        "reply_to": message.get("reply_to_message_id"),
    }


def _service_text(message: JsonDict) -> str | None:
    """A forum service message as Telegram apps summarise it; None for other messages."""
    created = message.get("forum_topic_created")
    if isinstance(created, dict):
        who = display_name(message.get("from") or {})
        return f"{who} created the topic “{created.get('name', '')}”"
    edited = message.get("forum_topic_edited")
    if isinstance(edited, dict):
        name = edited.get("name")
        return f"Topic renamed to “{name}”" if name else "Topic icon changed"
    if "forum_topic_closed" in message:
        return "Topic closed"
    if "forum_topic_reopened" in message:
        return "Topic reopened"
    return None


def seen_views(messages: list[JsonDict], me: int) -> list[JsonDict]:
    """A person's view of a chat (history and their ephemeral messages, in order) as
    page messages; each ephemeral one sorts after the history message before it."""
    views: list[JsonDict] = []
    last = 0.0
    for message in messages:
        if message.get("ephemeral_message_id") is None:
            last = float(message["message_id"])
            views.append(message_view(message, me))
        else:
            views.append(message_view(message, me, after=last))
    return views


def chat_name(chat_id: Any, me: int, group_id: int) -> ChatName | None:
    """Which of the page's two panes an emulator chat id belongs to, if any."""
    if chat_id == group_id:
        return "group"
    if chat_id == me:
        return "private"
    return None


def page_event(event: JsonDict, me: int, group_id: int) -> tuple[str, JsonDict] | None:
    """An emulator change event as a page event ``(name, data)``; None if not for this page.

    Membership changes come back as ``("members", {})``: the caller fills in the list.
    """
    kind = event.get("type")
    chat = chat_name(event.get("chat_id"), me, group_id)
    if kind in ("message", "edit") and chat is not None:
        return "message", {"chat": chat, "message": message_view(event["message"], me)}
    if kind == "delete" and chat is not None:
        return "delete", {"chat": chat, "id": int(event["message_id"])}
    if kind == "callback_answer" and chat is not None and event.get("user_id") == me:
        return "answer", {
            "chat": chat,
            "callback_query_id": event.get("callback_query_id"),
            "text": event.get("text"),
            "show_alert": bool(event.get("show_alert")),
            "url": event.get("url"),
        }
    if kind == "chat_action" and chat is not None:
        return "typing", {"chat": chat, "action": event.get("action")}
    if kind == "member" and chat == "group":
        return "members", {}
    if kind == "topic" and chat == "group":
        return "topics", {}
    if kind == "ephemeral" and chat == "group" and event.get("viewer_id") == me:
        # Only the one person who sees it; everybody else's page never hears of it.
        key = f"e{int(event['ephemeral_message_id'])}"
        shown = event.get("message")
        if event.get("action") == "delete" or not isinstance(shown, dict):
            return "delete", {"chat": chat, "key": key}
        after = float(event.get("after_message_id") or 0)
        view = message_view(shown, me, after=after)
        view["replaces"] = event.get("replaces_message_id")
        return "message", {"chat": chat, "message": view}
    if kind == "sandbox":
        return "bot", dict(event.get("bot") or {})
    return None


@dataclass(frozen=True)
class Link:
    """What following a URL means in the sandbox.

    ``kind``: "bot" (our bot; ``payload`` is the start parameter, if any), "telegram"
    (another Telegram chat, not in the sandbox), "external" (an http(s) page) or
    "unsupported".
    """

    kind: Literal["bot", "telegram", "external", "unsupported"]
    url: str
    payload: str | None = None
    target: str = ""


def classify_link(url: str, bot_username: str) -> Link:
    """Telegram links (https://t.me/<name>?start=..., tg://resolve?domain=...) and others."""
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return Link("unsupported", text)
    scheme = parts.scheme.lower()
    query = parse_qs(parts.query)
    if scheme == "tg":
        if parts.netloc.lower() != "resolve":
            return Link("unsupported", text)
        name = (query.get("domain") or [""])[0]
    elif scheme in ("http", "https") and (parts.hostname or "").lower() in _TELEGRAM_HOSTS:
        name = parts.path.strip("/").split("/")[0]
    elif scheme in ("http", "https") and parts.hostname:
        return Link("external", text)
    else:
        return Link("unsupported", text)
    if name.lower() != bot_username.lower() or "startgroup" in query:
        return Link("telegram", text, target=name)
    starts = query.get("start")
    return Link("bot", text, payload=starts[0] if starts else None, target=name)
