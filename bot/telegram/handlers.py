"""Thin Telegram handlers: answer, decode, load, apply, save, render, send.

Each handler turns an update into one call on ``Games`` (or a reply) and answers
the callback query with a short toast when the tap changed nothing.
"""

from __future__ import annotations

import html
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from telegram import (
    CallbackQuery,
    Chat,
    Update,
    User,
)
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot import render
from bot.app.games import Committed, Games
from bot.app.ids import new_game_id
from bot.domain import callbacks, flow
from bot.domain.callbacks import CallbackError, GroupButton, HandButton, LanguageButton, RulesButton
from bot.domain.flow import FlowError, Person
from bot.domain.lobby_options import LOBBY_OPTIONS, Who
from bot.domain.names import short_name
from bot.domain.records import AI_LEVELS, AiLevel, ChatGame
from bot.ops import metrics
from bot.render import Rendered
from bot.store.storage import Storage
from engine import Beat, Rules, legal_actions
from locales import (
    SUPPORTED,
    Translator,
    how_to_play,
    language_name,
    negotiate,
    rules_text,
)
from locales import translator as get_translator

log = logging.getLogger(__name__)
ADMIN_CACHE_SECONDS = 60.0
MAX_TOAST = 200
"""Telegram shows at most 200 characters of a callback answer."""
HANDLERS_KEY = "durak.handlers"
_GROUP_LINK_RE = re.compile(r"g(-?[0-9]{1,20})")
"""``/start g<chat id>``: the lobby's button for players who must open this chat."""
_MEMBER_STATUSES = (
    ChatMemberStatus.MEMBER,
    ChatMemberStatus.ADMINISTRATOR,
    ChatMemberStatus.OWNER,
    ChatMemberStatus.RESTRICTED,
)


@dataclass(frozen=True)
class GroupTap:
    """A tap on a group (lobby or result) button."""

    chat_id: int
    user: User
    game_id: str
    op: str
    bot: Any


@dataclass(frozen=True)
class LinkToast:
    """A toast key whose answer also opens ``url`` (a t.me deep link, which Telegram
    allows in any callback answer) in one tap."""

    key: str
    url: str


@dataclass(frozen=True)
class GroupAction:
    run: Callable[[GroupTap], Awaitable[str | LinkToast | None]]
    """Applies the tap; returns the toast key, if any."""
    who: Who = "anyone"
    refused: str = "toast.only_creator_manage"
    """The toast for someone ``who`` excludes."""


def person(user: User, lang: str) -> Person:
    return Person(user.id, user.full_name or user.first_name or str(user.id), lang)


class Handlers:
    def __init__(self, games: Games) -> None:
        self.games = games
        self.admins: dict[tuple[int, int], tuple[float, bool]] = {}
        self.answer_times: deque[float] = deque(maxlen=100_000)
        """Seconds from a tap reaching its handler to its answer (for the logs)."""
        self.group_actions = self._group_actions()

    def _group_actions(self) -> dict[str, GroupAction]:
        """Every group operation a button carries; an op missing here is refused."""
        actions = {
            "join": GroupAction(self.join),
            "leave": GroupAction(self.leave_lobby),
            "remove_ai": GroupAction(self.remove_ai, "manager"),
            "start": GroupAction(self.start_game, "manager", "toast.only_creator_start"),
            "cancel": GroupAction(self.cancel, "closer"),
            "drop_unreachable": GroupAction(self.drop_unreachable, "manager"),
            "new": GroupAction(self.next_game),
            "lobby": GroupAction(self.fresh_lobby),
            "how_to": GroupAction(self.how_to),
        }
        for level in AI_LEVELS:
            actions[f"ai_{level}"] = GroupAction(self.add_ai, "manager")
        for option in LOBBY_OPTIONS:
            actions[option.op] = GroupAction(self.change_option, option.who)
        return actions

    def install(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        app.bot_data[HANDLERS_KEY] = self
        app.add_handler(CommandHandler("start", self.start))
        app.add_handler(CommandHandler("newgame", self.new_game))
        app.add_handler(CommandHandler("help", self.help))
        app.add_handler(CommandHandler("stats", self.stats))
        app.add_handler(CommandHandler("rules", self.rules))
        app.add_handler(CommandHandler("language", self.language))
        app.add_handler(CallbackQueryHandler(self.button))
        app.add_handler(MessageHandler(filters.ChatType.PRIVATE & ~filters.COMMAND, self.private))
        # Before the others, and without stopping them: any private message or command.
        app.add_handler(MessageHandler(filters.ChatType.PRIVATE, self.back_in_chat), group=-1)
        app.add_error_handler(self.error)

    async def error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.warning("update failed: %s", context.error, exc_info=context.error)

    # --- helpers ----------------------------------------------------------------------------

    @property
    def storage(self) -> Storage:
        return self.games.storage

    async def chat_tr(self, chat: Chat, user: User | None) -> Translator:
        """The group's language (set from the first caller), or the user's in private."""
        if chat.type == ChatType.PRIVATE:
            return await self.user_tr(chat.id, user.language_code if user else None)
        user_lang = negotiate(user.language_code if user else None)
        return get_translator(await self.storage.init_chat_lang(chat.id, user_lang))

    async def user_tr(self, user_id: int, language_code: str | None) -> Translator:
        """A user's own language: the one chosen with /language in private, else Telegram's."""
        chosen = await self.storage.user_language(user_id)
        return get_translator(negotiate(chosen or language_code))

    async def is_admin(self, chat_id: int, user_id: int, bot: Any) -> bool:
        cached = self.admins.get((chat_id, user_id))
        now = time.monotonic()
        if cached is not None and now - cached[0] < ADMIN_CACHE_SECONDS:
            return cached[1]
        try:
            member = await bot.get_chat_member(chat_id, user_id)
            admin = member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)
        except TelegramError:
            admin = False
        self.admins[(chat_id, user_id)] = (now, admin)
        return admin

    async def is_member(self, chat_id: int, user_id: int, bot: Any) -> bool:
        try:
            member = await bot.get_chat_member(chat_id, user_id)
        except TelegramError:
            return False
        return bool(member.status in _MEMBER_STATUSES)

    async def mark_dm_open(self, user: User) -> None:
        record = await self.storage.user(user.id)
        if not record.dm_open or record.name != user.full_name:
            record.dm_open = True
            record.name = user.full_name
            await self.storage.save_user(user.id, record)

    def say(self, chat_id: int, text: str, reply_to: int | None = None) -> None:
        self.games.box.say(chat_id, Rendered(text), reply_to=reply_to)

    # --- commands ---------------------------------------------------------------------------

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user, message = update.effective_chat, update.effective_user, update.message
        if chat is None or user is None or message is None:
            return
        tr = await self.chat_tr(chat, user)
        if chat.type != ChatType.PRIVATE:
            self.say(chat.id, tr.t("start.group"))
            return
        await self.mark_dm_open(user)
        payload = context.args[0] if context.args else ""
        # Anything else (a forged or mistyped payload) gets the plain greeting.
        if link := _GROUP_LINK_RE.fullmatch(payload):
            group_id = int(link[1])
            game = await self.storage.load_table(group_id)
            # Only a member learns which group it is: the title is not for strangers.
            if game is not None and await self.is_member(group_id, user.id, context.bot):
                self.say(chat.id, tr.t("start.linked", group=game.chat_title))
                self.games.box.refresh(game)
                return
        self.say(chat.id, tr.t("start.private"))

    async def new_game(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = await self.chat_tr(chat, user)
        if chat.type == ChatType.PRIVATE:
            self.say(chat.id, tr.t("newgame.private"))
            return
        creator = person(user, negotiate(user.language_code))
        settings = await self.storage.chat_settings(chat.id)
        title = chat.title or ""
        try:
            await self.games.run(
                chat.id,
                flow.new_lobby,
                chat.id,
                title,
                creator,
                new_game_id(),
                not settings.how_to_shown,
            )
        except FlowError as err:
            reply_to = err.kwargs.get("reply_to")
            self.say(chat.id, tr.t(err.key), reply_to=reply_to)
            return
        if not settings.how_to_shown:
            shown = (await self.storage.chat_settings(chat.id)).model_copy(
                update={"how_to_shown": True}
            )
            await self.storage.save_chat_settings(chat.id, shown)

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None:
            return
        tr = await self.chat_tr(chat, user)
        self.say(chat.id, tr.t("help.text") + "\n\n" + how_to_play(tr.lang))

    async def stats(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = await self.chat_tr(chat, user)
        if chat.type == ChatType.PRIVATE:
            content = render.user_stats(await self.storage.user_stats(user.id), tr)
        else:
            content = render.group_stats(await self.storage.chat_stats(chat.id), tr)
        self.games.box.say(chat.id, content)

    async def rules(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The rules in brief, with buttons for the full text and each of its sections:
        in a group, of its lobby or game; in private, of the reader's current game (the
        default when none)."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        tr = await self.chat_tr(chat, user)
        if chat.type == ChatType.PRIVATE:
            game = await self.current_game(user.id)
        else:
            game = await self.storage.load_table(chat.id)
        target, reader_tr = chat.id, tr
        if chat.type != ChatType.PRIVATE and (await self.storage.user(user.id)).dm_open:
            # The text goes to the private chat, in the reader's own language.
            target, reader_tr = user.id, await self.user_tr(user.id, user.language_code)
            self.say(chat.id, tr.t("rules.sent_dm", name=short_name(user.full_name)))
        self.games.box.say(target, render.rules_message(game, self.games.timing, reader_tr))

    async def current_game(self, user_id: int) -> ChatGame | None:
        """The running game ``user_id`` plays in, if any (a rare command: a scan is fine)."""
        for chat_id in await self.storage.running_chats():
            game = await self.storage.load_table(chat_id)
            if game is not None and game.phase == "playing" and game.seat_of(user_id) is not None:
                return game
        return None

    async def full_rules(self, query: CallbackQuery, button: RulesButton) -> str | None:
        message = query.message
        if message is None:
            raise FlowError("toast.stale")
        game = await self.storage.load_table(button.chat_id) if button.chat_id else None
        rules = game.rules if game is not None else Rules()
        user = query.from_user
        if message.chat.type == ChatType.PRIVATE:
            lang = (await self.user_tr(user.id, user.language_code)).lang
        else:
            lang = (await self.games.group_translator(message.chat.id)).lang
        pace = render.table_pace(game, self.games.timing)
        texts = rules_text(
            rules,
            lang,
            turn_timeout=round(pace.turn_timeout),
            max_timeouts=flow.TIMEOUTS_BEFORE_HANDOVER,
            pace=pace,
            section=button.section,
        )
        for text in texts:
            self.say(message.chat.id, text)
        return None

    async def language(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None:
            return
        tr = await self.chat_tr(chat, user)
        names = [language_name(lang) for lang in SUPPORTED]
        self.games.box.say(chat.id, render.language_picker(tr, SUPPORTED, names))

    async def private(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if update.effective_user is not None:
            await self.mark_dm_open(update.effective_user)

    async def back_in_chat(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Writing to the bot while the Mini App collapsed the hand: its buttons come back."""
        buttons, user = self.games.app_buttons, update.effective_user
        if buttons is not None and user is not None:
            chat_id = await buttons.back_in_chat(user.id)
            if chat_id is not None:
                self.games.box.refresh_hand(chat_id, user.id)

    # --- buttons ----------------------------------------------------------------------------

    async def button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        started = time.monotonic()
        shows: list[Committed] = []
        with self.games.box.coming():
            try:
                with self.games.box.answering():
                    await self.handle_button(query, context, shows)
            finally:
                elapsed = time.monotonic() - started
                self.answer_times.append(elapsed)
                metrics.tap_answered(elapsed)
                # The move was stored before the answer; now its messages and timer.
                for committed in shows:
                    await self.games.show(committed)

    def latency_summary(self) -> str:
        times = sorted(self.answer_times)
        if not times:
            return "no taps handled"
        p50 = times[len(times) // 2] * 1000
        p99 = times[min(len(times) - 1, len(times) * 99 // 100)] * 1000
        return f"{len(times)} taps, tap handler to answer p50 {p50:.1f} ms, p99 {p99:.1f} ms"

    async def handle_button(
        self,
        query: CallbackQuery,
        context: ContextTypes.DEFAULT_TYPE,
        shows: list[Committed],
    ) -> None:
        """Decode, apply, answer. A move stored on the way is put in ``shows``, to be
        shown after the answer: the spinner stops as soon as it is saved."""
        toast: str | LinkToast | None
        kwargs: dict[str, Any] = {}
        try:
            decoded = callbacks.decode(query.data or "")
            if isinstance(decoded, GroupButton):
                toast = await self.group_button(query, decoded, context)
            elif isinstance(decoded, HandButton):
                toast = await self.hand_button(query, decoded, shows)
            elif isinstance(decoded, RulesButton):
                toast = await self.full_rules(query, decoded)
            else:
                toast = await self.language_button(query, decoded, context)
        except CallbackError:
            toast = "toast.invalid"
        except FlowError as err:
            toast, kwargs = err.key, err.kwargs
        if toast is None:
            await self.answer(query, None)
            return
        key, url = (toast.key, toast.url) if isinstance(toast, LinkToast) else (toast, None)
        # A toast is shown to the tapper alone, in their own language, as plain text.
        user = query.from_user
        tr = await self.user_tr(user.id, user.language_code)
        await self.answer(query, html.unescape(tr.t(key, **kwargs))[:MAX_TOAST], url)

    @staticmethod
    async def answer(query: CallbackQuery, text: str | None, url: str | None = None) -> None:
        """Answer the tap; the change is already stored, so a failed answer only costs
        the spinner (Telegram times it out)."""
        try:
            await query.answer(text, url=url)
        except TelegramError as err:
            log.info("could not answer a callback query: %s", err)

    async def group_button(
        self, query: CallbackQuery, button: GroupButton, context: ContextTypes.DEFAULT_TYPE
    ) -> str | LinkToast | None:
        message = query.message
        if message is None:
            raise FlowError("toast.stale")
        action = self.group_actions.get(button.op)
        if action is None:
            raise FlowError("toast.invalid")
        tap = GroupTap(message.chat.id, query.from_user, button.game_id, button.op, context.bot)
        if action.who != "anyone":
            await self.check_manager(tap, action)
        return await action.run(tap)

    async def check_manager(self, tap: GroupTap, action: GroupAction) -> None:
        """Refuse unless the tapper is the open lobby's creator or a group admin (or,
        for a "closer" action, any member once the creator has been away a while)."""
        game = await self.storage.load_table(tap.chat_id)
        if game is None or game.game_id != tap.game_id or game.phase != "lobby":
            raise FlowError("toast.stale")
        if flow.may_manage(game, tap.user.id, False):
            return
        if action.who == "closer" and flow.creator_away(game, self.games.clock()):
            return
        if not await self.is_admin(tap.chat_id, tap.user.id, tap.bot):
            raise FlowError(action.refused)

    async def join(self, tap: GroupTap) -> str | LinkToast | None:
        me = person(tap.user, negotiate(tap.user.language_code))
        await self.games.run(tap.chat_id, flow.join, tap.game_id, me)
        if not (await self.storage.user(tap.user.id)).dm_open:
            # The same deep link as the lobby's first button, opened by the answer itself.
            return LinkToast(
                "toast.open_dm", render.deep_link(self.games.bot_username, f"g{tap.chat_id}")
            )
        return "toast.joined"

    async def how_to(self, tap: GroupTap) -> str | LinkToast | None:
        """The "How to play" text, in the tapper's private chat (too long for an alert)."""
        tr = await self.user_tr(tap.user.id, tap.user.language_code)
        if not (await self.storage.user(tap.user.id)).dm_open:
            link = render.deep_link(self.games.bot_username, f"g{tap.chat_id}")
            return LinkToast("toast.how_to_open_dm", link)
        self.say(tap.user.id, how_to_play(tr.lang))
        return "toast.how_to_sent"

    async def leave_lobby(self, tap: GroupTap) -> str | None:
        await self.games.run(tap.chat_id, flow.leave_lobby, tap.game_id, tap.user.id)
        return None

    async def add_ai(self, tap: GroupTap) -> str | None:
        level: AiLevel = next(lv for lv in AI_LEVELS if tap.op == f"ai_{lv}")
        tr = await self.games.group_translator(tap.chat_id)
        name = str(tr.t(f"seat.ai_{level}"))
        await self.games.run(tap.chat_id, flow.add_ai, tap.game_id, tap.user.id, level, name)
        return None

    async def remove_ai(self, tap: GroupTap) -> str | None:
        await self.games.run(tap.chat_id, flow.remove_ai, tap.game_id, tap.user.id)
        return None

    async def change_option(self, tap: GroupTap) -> str | None:
        await self.games.run(tap.chat_id, flow.change_option, tap.game_id, tap.user.id, tap.op)
        return None

    async def cancel(self, tap: GroupTap) -> str | None:
        await self.games.run(tap.chat_id, flow.cancel, tap.game_id, tap.user.id)
        return None

    async def start_game(self, tap: GroupTap) -> str | None:
        unreachable = await self.unreachable(tap.chat_id)
        await self.games.run(tap.chat_id, flow.start, tap.game_id, tap.user.id, unreachable)
        return None

    async def drop_unreachable(self, tap: GroupTap) -> str | None:
        unreachable = await self.unreachable(tap.chat_id)
        await self.games.run(
            tap.chat_id, flow.drop_unreachable, tap.game_id, tap.user.id, unreachable
        )
        return None

    async def unreachable(self, chat_id: int) -> set[int]:
        game = await self.storage.load_table(chat_id)
        return await self.games.unreachable(game) if game is not None else set()

    async def next_game(self, tap: GroupTap) -> str | None:
        """The next game of the series (or a new one) in a new lobby."""
        await self.games.run(tap.chat_id, flow.next_game, tap.game_id, new_game_id())
        return None

    async def fresh_lobby(self, tap: GroupTap) -> str | None:
        """An empty lobby with the finished game's rules, opened by the tapper."""
        opener = person(tap.user, negotiate(tap.user.language_code))
        await self.games.run(tap.chat_id, flow.fresh_lobby, tap.game_id, opener, new_game_id())
        return None

    async def hand_button(
        self, query: CallbackQuery, button: HandButton, shows: list[Committed]
    ) -> str | None:
        user_id = query.from_user.id
        chat_id, gid, step = button.chat_id, button.game_id, button.step
        if button.op == "move":
            assert button.action is not None
            self.games.clear_mode(chat_id, user_id)
            try:
                committed = await self.games.commit(
                    chat_id, flow.play, gid, user_id, step, button.action
                )
            except FlowError as err:
                if err.key != "toast.moved_on":
                    raise
                raise await self.moved_on(query, chat_id) from None
            shows.append(committed)
            return None
        if button.op == "leave_yes":
            self.games.clear_mode(chat_id, user_id)
            await self.games.run(chat_id, flow.leave_game, gid, user_id)
            return "toast.left"
        if button.op == "take_back":
            # Checked by game, not by step: the computer keeps moving the seat meanwhile.
            await self.games.run(chat_id, flow.take_back_seat, gid, user_id)
            return "toast.taken_back"
        if button.op == "play_here":  # the Mini App's collapsed hand: the keyboard again
            if self.games.app_buttons is not None:
                await self.games.app_buttons.back_in_chat(user_id, chat_id)
            self.games.box.refresh_hand(chat_id, user_id)
            return None
        game = await self.storage.load_table(chat_id)
        if game is None or game.game_id != gid or game.phase != "playing":
            raise FlowError("toast.stale")
        seat = game.seat_of(user_id)
        if seat is None:
            raise FlowError("toast.not_in_game")
        state = game.engine_state()
        if step > state.step:
            raise FlowError("toast.stale")  # no keyboard of ours shows a step to come
        # Like a move, a keyboard change from an older keyboard still counts while it
        # makes sense now; the mode then belongs to the current step.
        if button.op == "pick":
            card = button.card
            if not any(isinstance(a, Beat) and a.card == card for a in legal_actions(state, seat)):
                if step < state.step:
                    raise await self.moved_on(query, chat_id)
                raise FlowError("toast.illegal")
            assert card is not None
            self.games.set_mode(chat_id, user_id, gid, state.step, ("pick", int(card)))
        elif button.op == "leave":
            self.games.set_mode(chat_id, user_id, gid, state.step, ("leave", 0))
        else:
            self.games.set_mode(chat_id, user_id, gid, state.step, None)
        return None

    async def moved_on(self, query: CallbackQuery, chat_id: int) -> FlowError:
        """A tap that no longer fits: say what changed, and show the fresh keyboard."""
        user = query.from_user
        self.games.box.refresh_hand(chat_id, user.id)
        game = await self.storage.load_table(chat_id)
        tr = await self.user_tr(user.id, user.language_code)
        return FlowError("toast.moved_on", change=render.moved_on_change(game, tr))

    async def language_button(
        self, query: CallbackQuery, button: LanguageButton, context: ContextTypes.DEFAULT_TYPE
    ) -> str | None:
        message = query.message
        if message is None or button.lang not in SUPPORTED:
            raise FlowError("toast.invalid")
        chat = message.chat
        user = query.from_user
        if chat.type == ChatType.PRIVATE:
            record = await self.storage.user(user.id)
            record.lang = button.lang
            await self.storage.save_user(user.id, record)
        else:
            # A group's language is everyone's: only its admins change it, and only here.
            if not await self.is_admin(chat.id, user.id, context.bot):
                raise FlowError("toast.only_admin_language")
            game = await self.storage.load_table(chat.id)
            settings = await self.storage.chat_settings(chat.id)
            settings.lang = button.lang
            await self.storage.save_chat_settings(chat.id, settings)
            if game is not None and game.phase in ("lobby", "playing", "finished"):
                self.games.box.refresh(game)
        tr = get_translator(button.lang)
        self.games.box.say(
            chat.id, Rendered(tr.t("language.set", language=language_name(button.lang)))
        )
        return None
