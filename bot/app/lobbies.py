"""Lobby and after-game use cases: what a command or a group button asks of a game.

New game ids come from ``ids.new_game_id`` looked up on the module at each call, so a
test can fix them (the same deal on every run).
"""

from __future__ import annotations

import contextlib
from typing import Literal

from bot.app import deals, ids
from bot.app.games import Games
from bot.domain import flow
from bot.domain.flow import FlowError, Person
from bot.domain.place import Place
from bot.domain.records import AI_LEVELS, AiLevel, ChatGame, LobbyScreen


async def admins_only(games: Games, chat_id: int) -> bool:
    """Whether only the group's admins may open and start games (/settings)."""
    return (await games.storage.chat_settings(chat_id)).starts == "admins"


async def open_lobby(
    games: Games,
    place: Place,
    title: str,
    creator: Person,
    command_id: int | None = None,
    topic_name: str = "",
) -> None:
    """/newgame: a lobby at ``place`` from the group's defaults, with "how to play" the
    first time in this group; ``command_id``: the /newgame message (tidy-up's);
    ``topic_name``: the forum topic's, when the lobby opens in one and it is known."""
    chat_id = place.chat_id  # the group's settings: whichever of its places
    settings = await games.storage.chat_settings(chat_id)
    first_time = not settings.how_to_shown
    await games.run(
        place,
        flow.new_lobby,
        place,
        title,
        creator,
        ids.new_game_id(),
        first_time,
        settings.defaults,
        settings.turn_timeout,
        topic_name,
    )
    if command_id is not None:
        await games.tidy.command(place, command_id)
    if first_time:
        # Read again: a change made meanwhile (a /language) must not be undone.
        shown = (await games.storage.chat_settings(chat_id)).model_copy(
            update={"how_to_shown": True}
        )
        await games.storage.save_chat_settings(chat_id, shown)


Reach = Literal["private", "group", "none"]
"""Where a joiner's hand will be: their private chat, the group (no private chat, the bot
an admin there), or nowhere yet (they must open the private chat first)."""


async def join(games: Games, place: Place, game_id: str, player: Person) -> Reach:
    """Seat ``player``; where their hand will be (the lobby says it too)."""
    if (await games.storage.user(player.user_id)).dm_open:
        await games.run(place, flow.join, game_id, player)
        return "private"
    group_hands = await games.rights.admin(place.chat_id)
    await games.run(place, flow.join, game_id, player, group_hands)
    return "group" if group_hands else "none"


async def leave(games: Games, place: Place, game_id: str, user_id: int) -> None:
    await games.run(place, flow.leave_lobby, game_id, user_id)


def ai_level(op: str) -> AiLevel:
    """The level of an ``ai_<level>`` operation."""
    return next(level for level in AI_LEVELS if op == f"ai_{level}")


async def add_ai(games: Games, place: Place, game_id: str, by: int, level: AiLevel) -> None:
    """A computer seat, named in the group's language."""
    tr = await games.languages.group(place.chat_id)
    name = str(tr.t(f"seat.ai_{level}"))
    await games.run(place, flow.add_ai, game_id, by, level, name)


async def remove_ai(games: Games, place: Place, game_id: str, by: int) -> None:
    await games.run(place, flow.remove_ai, game_id, by)


async def change_option(
    games: Games, place: Place, game_id: str, by: int, op: str, choice: int | None = None
) -> ChatGame:
    """Set option ``op`` to its value number ``choice``, or (a button from before the
    options screen) move it to its next value; the lobby as it now is."""
    if choice is None:
        return await games.run(place, flow.change_option, game_id, by, op)
    return await games.run(place, flow.choose_option, game_id, by, op, choice)


async def show_screen(
    games: Games, place: Place, game_id: str, by: int, screen: LobbyScreen
) -> ChatGame:
    """Switch the lobby's keyboard (options, "cancel it?", or back to its buttons)."""
    return await games.run(place, flow.show_screen, game_id, by, screen)


async def cancel(games: Games, place: Place, game_id: str, by: int) -> None:
    await games.run(place, flow.cancel, game_id, by)


async def unreachable_in(games: Games, place: Place) -> set[int]:
    """Who in the place's game the bot cannot write to in private."""
    game = await games.storage.load_table(place)
    return await games.unreachable(game) if game is not None else set()


async def start(games: Games, place: Place, game_id: str, by: int) -> None:
    """Deal. Who cannot be reached in private plays from the group if the bot is an
    admin there; else Start waits for them (and the lobby says the bot must be an admin)."""
    unreachable = await unreachable_in(games, place)
    lobby = await games.storage.load_table(place)
    group_hands = bool(unreachable) and await games.rights.admin(place.chat_id, fresh=True)
    if unreachable and lobby is not None and lobby.group_hands != group_hands:
        await games.run(place, flow.note_group_hands, game_id, group_hands)
    # A fresh secret deal for the lobby's deck (``bot.app.deals``).
    deal = deals.deal_for(lobby)
    timeout = (await games.storage.chat_settings(place.chat_id)).turn_timeout
    await games.run(
        place, flow.start, game_id, by, unreachable, deal, timeout, group_hands=group_hands
    )


async def drop_unreachable(games: Games, place: Place, game_id: str, by: int) -> None:
    unreachable = await unreachable_in(games, place)
    await games.run(place, flow.drop_unreachable, game_id, by, unreachable)


async def next_game(games: Games, place: Place, game_id: str) -> None:
    """The next game of the series (or a new one) in a new lobby."""
    await games.run(place, flow.next_game, game_id, ids.new_game_id())


async def fresh_lobby(games: Games, place: Place, game_id: str, opener: Person) -> None:
    """An empty lobby with the finished game's rules, opened by ``opener``."""
    await games.run(place, flow.fresh_lobby, game_id, opener, ids.new_game_id())


async def rename_topic(games: Games, place: Place, name: str) -> None:
    """The game's forum topic was renamed (a service message says so): its private
    messages name it anew. Nothing to do without a game there, or with the name known."""
    with contextlib.suppress(FlowError):
        await games.run(place, flow.rename_topic, name)
