"""The group's buttons (lobby and results), routed by operation: ``GROUP_ROUTES``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from telegram import User

from bot import render
from bot.app import hands, lobbies
from bot.app.players import dm_open
from bot.domain import flow
from bot.domain.callbacks import GroupButton, GroupOp, encode_group_link
from bot.domain.flow import FlowError
from bot.domain.lobby_options import LOBBY_OPTIONS, OPTIONS_BY_OP, Who
from bot.domain.place import Place
from bot.domain.records import AI_LEVELS, LobbyScreen
from bot.telegram.common import LinkToast, Said, Services, Toast, person
from bot.telegram.taps import Tap
from locales import Translator, how_to_play, negotiate


@dataclass(frozen=True)
class GroupTap:
    """A tap on a group (lobby or result) button."""

    place: Place
    """The place of the tapped message: its game's."""
    user: User
    game_id: str
    op: GroupOp
    bot: Any
    language: Callable[[], Awaitable[Translator]]
    """The tapper's own language (``Tap.tapper_language``)."""
    choice: int | None = None
    """An option's value number, from a button of the options screen."""
    query_id: str = ""
    """The tap's callback query (an ephemeral answer names it)."""


@dataclass(frozen=True)
class GroupRoute:
    run: Callable[[Services, GroupTap], Awaitable[Toast]]
    """Applies the tap; returns the toast, if any."""
    who: Who = "anyone"
    refused: str = "toast.only_creator_manage"
    """The toast for someone ``who`` excludes."""
    opens: bool = False
    """It opens or starts a game: in a group where only admins may (/settings), only they."""


async def join(services: Services, tap: GroupTap) -> Toast:
    me = person(tap.user, negotiate(tap.user.language_code))
    reach = await lobbies.join(services.games, tap.place, tap.game_id, me)
    if reach == "private":
        return "toast.joined"
    # The same deep link as the lobby's first button, opened by the answer itself.
    key = "toast.open_dm_or_group" if reach == "group" else "toast.open_dm"
    return LinkToast(key, _deep_link(services, tap))


async def how_to(services: Services, tap: GroupTap) -> Toast:
    """The "How to play" text, in the tapper's private chat (too long for an alert)."""
    tr = await tap.language()
    if not await dm_open(services.games.storage, tap.user.id):
        return LinkToast("toast.how_to_open_dm", _deep_link(services, tap))
    services.tell(tap.user.id, how_to_play(tr.lang))
    return "toast.how_to_sent"


def _deep_link(services: Services, tap: GroupTap) -> str:
    return render.deep_link(services.games.bot_username, encode_group_link(tap.place))


async def my_hand(services: Services, tap: GroupTap) -> Toast:
    """The table's "🃏 My hand": a player without a private chat gets their hand as a
    message in the group only they see; anyone else is pointed to their private chat."""
    games, user_id = services.games, tap.user.id
    if await hands.show_in_group(games, tap.place, tap.game_id, user_id, tap.query_id):
        return None
    return LinkToast("toast.hand_in_private", _deep_link(services, tap))


async def leave(services: Services, tap: GroupTap) -> Toast:
    await lobbies.leave(services.games, tap.place, tap.game_id, tap.user.id)
    return None


async def add_ai(services: Services, tap: GroupTap) -> Toast:
    level = lobbies.ai_level(tap.op)
    await lobbies.add_ai(services.games, tap.place, tap.game_id, tap.user.id, level)
    return None


async def remove_ai(services: Services, tap: GroupTap) -> Toast:
    await lobbies.remove_ai(services.games, tap.place, tap.game_id, tap.user.id)
    return None


async def change_option(services: Services, tap: GroupTap) -> Toast:
    """Set an option; the answer says its new value at once (the message edit follows,
    paced like every group edit)."""
    game = await lobbies.change_option(
        services.games, tap.place, tap.game_id, tap.user.id, tap.op, tap.choice
    )
    tr = await tap.language()
    label = render.option_label(OPTIONS_BY_OP[tap.op], game, tr)
    return Said(tr.t("lobby.option_set", option=label))


def _screen(screen: LobbyScreen) -> Callable[[Services, GroupTap], Awaitable[Toast]]:
    async def show(services: Services, tap: GroupTap) -> Toast:
        await lobbies.show_screen(services.games, tap.place, tap.game_id, tap.user.id, screen)
        return None

    return show


async def options(services: Services, tap: GroupTap) -> Toast:
    """Open the options screen; on it, an option's name tells how to change it."""
    game = await services.games.storage.load_table(tap.place)
    if game is not None and game.game_id == tap.game_id and game.lobby_screen == "options":
        return "lobby.options_hint"
    return await _screen("options")(services, tap)


async def cancel(services: Services, tap: GroupTap) -> Toast:
    await lobbies.cancel(services.games, tap.place, tap.game_id, tap.user.id)
    return None


async def start(services: Services, tap: GroupTap) -> Toast:
    await lobbies.start(services.games, tap.place, tap.game_id, tap.user.id)
    return None


async def drop_unreachable(services: Services, tap: GroupTap) -> Toast:
    await lobbies.drop_unreachable(services.games, tap.place, tap.game_id, tap.user.id)
    return None


async def next_game(services: Services, tap: GroupTap) -> Toast:
    await lobbies.next_game(services.games, tap.place, tap.game_id)
    return None


async def fresh_lobby(services: Services, tap: GroupTap) -> Toast:
    opener = person(tap.user, negotiate(tap.user.language_code))
    await lobbies.fresh_lobby(services.games, tap.place, tap.game_id, opener)
    return None


GROUP_ROUTES: dict[GroupOp, GroupRoute] = {
    "join": GroupRoute(join),
    "leave": GroupRoute(leave),
    "remove_ai": GroupRoute(remove_ai, "manager"),
    "start": GroupRoute(start, "manager", "toast.only_creator_start", opens=True),
    "cancel": GroupRoute(_screen("cancel"), "closer"),
    "cancel_yes": GroupRoute(cancel, "closer"),
    "cancel_no": GroupRoute(_screen("main"), "closer"),
    "options": GroupRoute(options, "manager"),
    "options_back": GroupRoute(_screen("main"), "manager"),
    "drop_unreachable": GroupRoute(drop_unreachable, "manager"),
    "new": GroupRoute(next_game, opens=True),
    "lobby": GroupRoute(fresh_lobby, opens=True),
    "how_to": GroupRoute(how_to),
    "my_hand": GroupRoute(my_hand),
    **{f"ai_{level}": GroupRoute(add_ai, "manager") for level in AI_LEVELS},
    **{option.op: GroupRoute(change_option, option.who) for option in LOBBY_OPTIONS},
}
"""Every group operation a button carries; an op missing here is refused."""


async def group_tap(services: Services, tap: Tap, button: GroupButton) -> Toast:
    if tap.query.message is None or tap.place is None:
        raise FlowError("toast.stale")
    route = GROUP_ROUTES.get(button.op)
    if route is None:
        raise FlowError("toast.invalid")
    group = GroupTap(
        tap.place,
        tap.query.from_user,
        button.game_id,
        button.op,
        tap.bot,
        tap.tapper_language,
        button.choice,
        tap.query.id,
    )
    if route.who != "anyone":
        await check_manager(services, group, route)
    if route.opens and not await may_open(services, group):
        raise FlowError("settings.toast_only_admins_start")
    return await route.run(services, group)


async def may_open(services: Services, tap: GroupTap) -> bool:
    """Whether the tapper may open or start a game: anyone, unless only the group's admins
    may (/settings)."""
    chat_id = tap.place.chat_id
    if not await lobbies.admins_only(services.games, chat_id):
        return True
    return await services.members.is_admin(chat_id, tap.user.id, tap.bot)


async def check_manager(services: Services, tap: GroupTap, route: GroupRoute) -> None:
    """Refuse unless the tapper is the open lobby's creator or a group admin (or,
    for a "closer" action, any member once the creator has been away a while)."""
    games = services.games
    game = await games.storage.load_table(tap.place)
    if game is None or game.game_id != tap.game_id or game.phase != "lobby":
        raise FlowError("toast.stale")
    if flow.may_manage(game, tap.user.id, False):
        return
    if route.who == "closer" and flow.creator_away(game, games.clock()):
        return
    if not await services.members.is_admin(tap.place.chat_id, tap.user.id, tap.bot):
        raise FlowError(route.refused)
