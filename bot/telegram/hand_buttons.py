"""The buttons of a player's private hand message, routed by operation: ``HAND_ROUTES``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot import render
from bot.app import hands
from bot.domain.callbacks import HandButton, HandOp
from bot.telegram.common import Said, Services, Toast
from bot.telegram.taps import Tap

HandRoute = Callable[[Services, Tap, HandButton], Awaitable[Toast]]


async def move(services: Services, tap: Tap, button: HandButton) -> Toast:
    assert button.action is not None
    user_id = tap.query.from_user.id
    committed = await hands.move(
        services.games, button, button.action, user_id, tap.tapper_language
    )
    tap.shows.append(committed)
    # The answer names the move the tapper made, so a tap is confirmed as they look.
    seat = committed.game.seat_of(user_id)
    if seat is None:
        return None
    said = render.own_move_toast(committed.game, seat, await tap.tapper_language())
    return Said(said) if said else None


async def leave_game(services: Services, tap: Tap, button: HandButton) -> Toast:
    await hands.leave_game(services.games, button, tap.query.from_user.id)
    return "toast.left"


async def take_back(services: Services, tap: Tap, button: HandButton) -> Toast:
    await hands.take_back(services.games, button, tap.query.from_user.id)
    return "toast.taken_back"


async def play_here(services: Services, tap: Tap, button: HandButton) -> Toast:
    await hands.play_here(services.games, button, tap.query.from_user.id)
    return None


async def show_mode(services: Services, tap: Tap, button: HandButton) -> Toast:
    """Pick, Leave and Back change only the keyboard."""
    user_id = tap.query.from_user.id
    await hands.show_mode(services.games, button, user_id, tap.tapper_language)
    return None


async def review(services: Services, tap: Tap, button: HandButton) -> Toast:
    """🔍 Review under a finished game's result (``bot.app.reviews``)."""
    if services.reviews is None:
        return "toast.stale"
    tr = await tap.tapper_language()
    user_id = tap.query.from_user.id
    return await services.reviews.request(button.place, button.game_id, user_id, tr)


HAND_ROUTES: dict[HandOp, HandRoute] = {
    "move": move,
    "pick": show_mode,
    "leave": show_mode,
    "back": show_mode,
    "leave_yes": leave_game,
    "take_back": take_back,
    "play_here": play_here,
    "review": review,
}


async def hand_tap(services: Services, tap: Tap, button: HandButton) -> Toast:
    return await HAND_ROUTES[button.op](services, tap, button)
