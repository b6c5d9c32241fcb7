"""The Hard player's review in the player's private chat: the 🔍 button on a finished
hand, the progress line, and the result (the costliest moments, at most a few lines)."""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

from bot.domain import callbacks
from bot.domain.place import Place
from bot.domain.review import Moment, ReviewResult
from bot.render import faces
from bot.render.common import Rendered
from engine import Action, Attack, Beat, Card, Take, Transfer
from locales import Html, Translator, visible_text


def review_button(place: Place, game_id: str, tr: Translator) -> InlineKeyboardButton:
    # No step in it: the button stays valid for as long as the game is kept.
    data = callbacks.encode_hand_op(place, game_id, 0, "review")
    return InlineKeyboardButton(visible_text(str(tr.t("review.button"))), callback_data=data)


def progress(tr: Translator, group: str, done: int, total: int) -> Rendered:
    if total == 0:
        return Rendered(tr.t("review.progress_start", group=group))
    return Rendered(tr.t("review.progress", group=group, done=done, total=total))


def percent(chance: float) -> int:
    return round(chance * 100)


def _cards(tr: Translator, cards: tuple[Card, ...]) -> str:
    return faces.cards(tr, cards)


def _table_cards(m: Moment) -> tuple[Card, ...]:
    return tuple(c for pair in m.table for c in pair if c is not None)


def action_text(tr: Translator, action: Action, m: Moment, *, taken: bool) -> Html:
    """The move as a phrase: "you took 9♥" (taken) or "beating 9♥ with J♥" (the better)."""
    way = "review.taken" if taken else "review.best"
    if isinstance(action, Attack):
        return tr.t(f"{way}.attack", cards=_cards(tr, action.cards))
    if isinstance(action, Beat):
        return tr.t(
            f"{way}.beat", attack=faces.card(tr, action.attack), card=faces.card(tr, action.card)
        )
    if isinstance(action, Transfer):
        return tr.t(f"{way}.transfer", card=faces.card(tr, action.card))
    if isinstance(action, Take):
        return tr.t(f"{way}.take", cards=_cards(tr, _table_cards(m)))
    return tr.t(f"{way}.pass")


def moment_line(tr: Translator, m: Moment) -> Html:
    """One costly decision in a line."""
    return tr.t(
        "review.line",
        bout=m.bout + 1,
        taken=action_text(tr, m.taken, m, taken=True),
        before=percent(m.durak_best),
        after=percent(m.durak_taken),
        best=action_text(tr, m.best, m, taken=False),
    )


def result_message(
    result: ReviewResult, tr: Translator, group: str, app_url: str | None = None
) -> Rendered:
    """The review: its title, then each costly moment (or none found); a button to see
    the moments in the Mini App when it is configured."""
    lines: list[str] = [tr.n("review.title", result.decisions, group=group)]
    if result.moments:
        lines += [f"{i}. {moment_line(tr, m)}" for i, m in enumerate(result.moments, 1)]
    else:
        lines.append(tr.t("review.none"))
    keyboard = None
    if app_url is not None and result.moments:
        label = visible_text(str(tr.t("review.open_app")))
        button = InlineKeyboardButton(label, web_app=WebAppInfo(app_url))
        keyboard = InlineKeyboardMarkup([[button]])
    return Rendered("\n".join(lines), keyboard)


def failed(tr: Translator, group: str) -> Rendered:
    return Rendered(tr.t("review.failed", group=group))
