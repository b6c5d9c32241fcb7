"""Every tap on an inline button: decode, route by the button's kind, answer.

The routes themselves live with their commands (``rules``, ``language``) or in
``group_buttons`` and ``hand_buttons``; ``registry`` puts them in ``TapRouter``.
A move stored on the way is shown only after the answer: the spinner stops as soon as
it is saved.
"""

from __future__ import annotations

import html
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from telegram import CallbackQuery, Update
from telegram.ext import ContextTypes

from bot.app.games import Committed
from bot.app.language import Languages
from bot.domain import callbacks
from bot.domain.callbacks import Button, CallbackError
from bot.domain.flow import FlowError
from bot.domain.place import Place
from bot.ops import metrics
from bot.telegram.common import LinkToast, Said, Services, Toast, answer, place_of
from locales import Translator

MAX_TOAST = 200
"""Telegram shows at most 200 characters of a callback answer."""


@dataclass(eq=False)
class Tap:
    """One tap being handled."""

    query: CallbackQuery
    bot: Any
    languages: Languages
    place: Place | None = None
    """Where the tapped message is (``place_of``; a hand's game names its own place)."""
    shows: list[Committed] = field(default_factory=list)
    """Moves stored while handling it, shown once it is answered."""
    _tapper_tr: Translator | None = None

    async def tapper_language(self) -> Translator:
        """The tapper's own language (toasts, their private chat), decided once per tap."""
        if self._tapper_tr is None:
            user = self.query.from_user
            self._tapper_tr = await self.languages.person(user.id, user.language_code)
        return self._tapper_tr


TapRoute = Callable[[Services, Tap, Any], Awaitable[Toast]]
"""Handles one kind of button (its third argument); returns the toast, if any."""


class TapRouter:
    def __init__(self, services: Services, routes: Mapping[type[Button], TapRoute]) -> None:
        self.services = services
        self.routes = routes
        self.answer_times: deque[float] = deque(maxlen=100_000)
        """Seconds from a tap reaching its handler to its answer (for the logs)."""

    async def on_tap(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        games = self.services.games
        started = time.monotonic()
        tap = Tap(query, context.bot, games.languages, place_of(update))
        with games.box.coming():
            try:
                with games.box.answering():
                    await self.handle(tap)
            finally:
                elapsed = time.monotonic() - started
                self.answer_times.append(elapsed)
                metrics.tap_answered(elapsed)
                # The move was stored before the answer; now its messages and timer.
                for committed in tap.shows:
                    await games.show(committed)

    async def handle(self, tap: Tap) -> None:
        """Decode, apply, answer."""
        toast: Toast
        kwargs: dict[str, Any] = {}
        try:
            button = callbacks.decode(tap.query.data or "")
            toast = await self.routes[type(button)](self.services, tap, button)
        except CallbackError:
            toast = "toast.invalid"
        except FlowError as err:
            toast, kwargs = err.key, err.kwargs
        if toast is None:
            await answer(tap.query, None)
            return
        if isinstance(toast, Said):
            await answer(tap.query, html.unescape(toast.text)[:MAX_TOAST])
            return
        key, url = (toast.key, toast.url) if isinstance(toast, LinkToast) else (toast, None)
        # A toast is shown to the tapper alone, in their own language, as plain text.
        tr = await tap.tapper_language()
        await answer(tap.query, html.unescape(tr.t(key, **kwargs))[:MAX_TOAST], url)

    def latency_summary(self) -> str:
        times = sorted(self.answer_times)
        if not times:
            return "no taps handled"
        p50 = times[len(times) // 2] * 1000
        p99 = times[min(len(times) - 1, len(times) * 99 // 100)] * 1000
        return f"{len(times)} taps, tap handler to answer p50 {p50:.1f} ms, p99 {p99:.1f} ms"
