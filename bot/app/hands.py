"""Hand button use cases: a move, leaving, taking a seat back, the keyboard's modes.

A tap that no longer fits the game ("moved on") raises ``FlowError("toast.moved_on")``
naming what changed, in the tapper's language, and shows them the fresh keyboard.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot import render
from bot.app.games import Committed, Games
from bot.domain import flow
from bot.domain.callbacks import HandButton
from bot.domain.flow import FlowError
from bot.domain.hand_modes import HandMode
from bot.domain.place import Place
from bot.output.planner import in_group
from engine import Action, Beat, legal_actions
from locales import Translator

TapperLanguage = Callable[[], Awaitable[Translator]]
"""The tapper's own language, asked for only when a toast must name something."""


async def moved_on(games: Games, place: Place, user_id: int, language: TapperLanguage) -> FlowError:
    """A tap that no longer fits: say what changed, and show the fresh keyboard."""
    game = await games.storage.load_table(place)
    group = game is not None and in_group(game, user_id)
    games.box.refresh_hand(place, user_id, in_group=group)
    tr = await language()
    seat = game.seat_of(user_id) if game is not None else None
    key, change = render.moved_on_toast(game, tr, seat)
    return FlowError(key, change=change)


async def move(
    games: Games, button: HandButton, action: Action, user_id: int, language: TapperLanguage
) -> Committed:
    """Store the move (shown later: ``Games.show``, after the tap is answered)."""
    place = button.place
    games.clear_mode(place, user_id)
    try:
        return await games.commit(place, flow.play, button.game_id, user_id, button.step, action)
    except FlowError as err:
        if err.key != "toast.moved_on":
            raise
        raise await moved_on(games, place, user_id, language) from None


async def leave_game(games: Games, button: HandButton, user_id: int) -> None:
    games.clear_mode(button.place, user_id)
    await games.run(button.place, flow.leave_game, button.game_id, user_id)


async def take_back(games: Games, button: HandButton, user_id: int) -> None:
    # Checked by game, not by step: the computer keeps moving the seat meanwhile.
    await games.run(button.place, flow.take_back_seat, button.game_id, user_id)


async def play_here(games: Games, button: HandButton, user_id: int) -> None:
    """The Mini App's collapsed hand: the keyboard again."""
    if games.app_buttons is not None:
        await games.app_buttons.back_in_chat(user_id, button.place)
    games.box.refresh_hand(button.place, user_id)


async def show_mode(
    games: Games, button: HandButton, user_id: int, language: TapperLanguage
) -> None:
    """Pick a beat target, confirm Leave, or go back to the normal keyboard."""
    place, game_id, step = button.place, button.game_id, button.step
    game = await games.storage.load_table(place)
    if game is None or game.game_id != game_id or game.phase != "playing":
        raise FlowError("toast.stale")
    seat = game.seat_of(user_id)
    if seat is None:
        raise FlowError("toast.not_in_game")
    state = game.engine_state()
    if step > state.step:
        raise FlowError("toast.stale")  # no keyboard of ours shows a step to come
    # Like a move, a keyboard change from an older keyboard still counts while it
    # makes sense now; the mode then belongs to the current step.
    mode: HandMode | None = None
    if button.op == "pick":
        card = button.card
        if not any(isinstance(a, Beat) and a.card == card for a in legal_actions(state, seat)):
            if step < state.step:
                raise await moved_on(games, place, user_id, language)
            raise FlowError("toast.illegal")
        assert card is not None
        mode = ("pick", int(card))
    elif button.op == "leave":
        mode = ("leave", 0)
    games.set_mode(place, user_id, game_id, state.step, mode, in_group=in_group(game, user_id))


async def show_in_group(
    games: Games, place: Place, game_id: str, user_id: int, query_id: str
) -> bool:
    """The table's "🃏 My hand": the tapper's hand as a new ephemeral message in the
    group (answering the tap ``query_id``), if that is where they play; False: they
    play from their private chat."""
    game = await games.storage.peek_table(place)
    if game is None or game.game_id != game_id or game.phase != "playing":
        raise FlowError("toast.stale")
    if game.seat_of(user_id) is None:
        raise FlowError("toast.not_in_game")
    if not in_group(game, user_id):
        return False
    games.box.show_group_hand(place, user_id, query_id)
    return True
