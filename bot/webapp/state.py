"""The JSON the Mini App shows: one seat's view of one table, nothing more.

Pure (no Redis, no clock of its own). Everything comes from ``engine.view(state,
seat)``, whose non-hand part is the public view (whom the game waits on is
``must_act``: never who could throw in), plus public facts of the table: names,
roles, the deadline, the result. Card and action texts are the engine's (``10♥``,
``beat 7♥ 10♥``); the page shows cards with the localised rank letters of ``texts.ranks``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from bot.domain.records import ChatGame
from bot.render import log, results_message
from bot.render.common import place_title, seat_names
from engine import Action, Attack, Pass, PlayerView, State, Swap, Take, Transfer, view
from engine.events import (
    Attacked,
    Beaten,
    BoutStarted,
    Discarded,
    Event,
    PickedUp,
    Took,
    Transferred,
)
from locales import Html, Translator, visible_text

JsonDict = dict[str, Any]
LOG_LINES = 8
RANK_LETTERS = {11: "J", 12: "Q", 13: "K", 14: "A"}


def plain(html: Html | str) -> str:
    """A catalogue text as the page shows it: plain text (the page never parses HTML)."""
    return visible_text(str(html))


@cache
def texts(tr: Translator) -> dict[str, Any]:
    """The page's fixed labels in the player's language (the same object every time:
    callers must not change it)."""
    keys = {
        "take": "hand.take",
        "pass": "hand.pass",
        "trump": "app.trump",
        "stock": "app.stock",
        "discard": "app.discard",
        "last_bout": "app.last_bout",
        "log": "app.log",
        "offline": "app.offline",
        "auth_failed": "app.auth_failed",
        "not_seated": "app.not_seated",
        "pick_attack": "app.pick_attack",
        "start": "lobby.start",
        "title": "table.title",
        "empty": "table.empty",
        "takes": "app.takes",
        "pick_more": "app.pick_more",
    }
    out: dict[str, Any] = {name: plain(tr.t(key)) for name, key in keys.items()}
    # Templates the page fills with the cards it has selected.
    for name in ("attack_with", "throw_in_with"):
        out[name] = plain(tr.t(f"app.{name}", cards="{cards}"))
    out["ranks"] = {letter: tr.rank(rank) for rank, letter in RANK_LETTERS.items()}
    return out


def event_line(event: Event, names: list[str], tr: Translator) -> str | None:
    """One public event as a log line: the group message's line, as plain text."""
    line = log.event_line(event, names, tr)
    return None if line is None else plain(line)


def last_bout(history: tuple[Event, ...], names: list[str], tr: Translator) -> JsonDict | None:
    """The cards of the last finished bout as attack/defence pairs, and how it ended."""
    end = next(
        (
            i
            for i in range(len(history) - 1, -1, -1)
            if isinstance(history[i], Discarded | PickedUp)
        ),
        None,
    )
    if end is None:
        return None
    begin = next((i for i in range(end - 1, -1, -1) if isinstance(history[i], BoutStarted)), -1)
    pairs: list[list[str | None]] = []
    for event in history[begin + 1 : end]:
        if isinstance(event, Attacked):
            pairs.extend([str(c), None] for c in event.cards)
        elif isinstance(event, Transferred):
            pairs.append([str(event.card), None])
        elif isinstance(event, Beaten):
            for pair in pairs:
                if pair[0] == str(event.attack):
                    pair[1] = str(event.card)
    return {"pairs": pairs, "outcome": event_line(history[end], names, tr)}


def taker(history: tuple[Event, ...]) -> int | None:
    """The defender who declared a take in the bout under way (throw-ins may follow), from
    the public history: a ``Took`` since the bout began, the cards not yet picked up."""
    for event in reversed(history):
        if isinstance(event, Took):
            return event.player
        if isinstance(event, BoutStarted | PickedUp | Discarded):
            return None
    return None


def waits_on(v: PlayerView) -> set[int]:
    """The seats the game waits on now: the leader or the defender; once every card is
    beaten or the defender takes, the attackers who may still add. (While the defender
    thinks, attackers may add too, but the game does not wait on them.)"""
    turn = v.must_act
    return {turn.player} if turn.player is not None else set(turn.may_add)


def role_of(v: PlayerView, seat: int) -> str:
    if seat in v.out:
        return "out"
    if seat == v.defender:
        return "defender"
    if seat == v.attacker:
        return "attacker"
    return "player"


def _role_text(role: str, cards: int, tr: Translator) -> str:
    if role == "out":
        return plain(tr.t("role.out"))
    return plain(tr.n(f"role.{role}", cards))


def _prompt(
    table: ChatGame, v: PlayerView, seat: int, names: list[str], waiting: set[int], tr: Translator
) -> str:
    if table.seats[seat].computer:
        return plain(tr.t("hand.ai_plays"))
    if seat in v.out:
        return plain(tr.t("hand.out"))
    if seat == v.must_act.player:  # the leader or the defender: the game needs them
        return plain(tr.t("hand.prompt_defend" if v.table else "hand.prompt_lead"))
    if any(not isinstance(a, Swap) for a in v.legal_actions):
        taking = taker(v.history)
        if taking is not None:
            return plain(tr.t("app.prompt_take_throw_in", name=names[taking]))
        return plain(tr.t("hand.prompt_throw_in"))
    others = ", ".join(names[s] for s in v.waiting_for if s in waiting)
    return plain(tr.t("app.waiting", names=others)) if others else plain(tr.t("hand.wait"))


def _result(table: ChatGame, tr: Translator) -> JsonDict:
    """The group's result message (places, durak or losing team, series), as lines."""
    rendered = results_message(table, tr, reveal=False)  # the reveal: the group message only
    title, *lines = plain(rendered.text).split("\n")
    buttons = rendered.markup.inline_keyboard if rendered.markup else ()
    rematch = buttons[0][0].text if buttons and buttons[0] else ""
    return {"title": title, "lines": lines, "durak": table.final_durak, "rematch": rematch}


def button_label(action: Action, tr: Translator) -> str | None:
    """Button text of an action the page offers as a button; None for the ones made by
    tapping cards (a single-card attack, a beat)."""
    if isinstance(action, Take | Pass):
        return plain(tr.t(f"hand.{action.kind}"))
    if isinstance(action, Transfer | Swap):
        return plain(tr.t(f"hand.{action.kind}", card=tr.card(action.card)))
    if isinstance(action, Attack) and len(action.cards) > 1:
        return tr.cards(action.cards)
    return None


def game_state(game: ChatGame, seat: int, tr: Translator, state: State | None = None) -> JsonDict:
    """What ``seat`` sees of ``game`` (a lobby, a running or a finished game).
    ``state``: the game's engine state when the caller has parsed it already."""
    names = [plain(name) for name in seat_names(game.seats, tr)]
    base: JsonDict = {
        "game": game.game_id,
        "phase": game.phase,
        "seat": seat,
        "lang": tr.lang,
        "texts": texts(tr),
        "title": visible_text(place_title(game, tr)),
    }
    if game.state is None:  # a lobby, or a lobby that was cancelled
        base.update(_lobby_state(game, seat, names, tr))
        return base
    v = view(state or game.engine_state(), seat)
    playing = game.phase == "playing"
    legal = v.legal_actions if playing and not game.seats[seat].computer else ()
    waiting = set(v.waiting_for) if playing else set()
    if not any(not isinstance(a, Swap) for a in legal):  # a swap is never waited for
        waiting.discard(seat)  # the seat may add, but this player has nothing (more) to add
    waited = waiting & waits_on(v)  # of those, the ones the game cannot go on without
    base.update(
        hand=[str(c) for c in v.hand],
        legal=[str(a) for a in legal],
        labels={str(a): label for a in legal if (label := button_label(a, tr)) is not None},
        table=[[str(a), str(d) if d is not None else None] for a, d in v.table],
        trump=str(v.trump_card),
        trump_suit=v.trump_card.suit.symbol,
        trump_in_stock=v.trump_card_in_stock,
        stock=v.stock_count,
        discard=v.discard_count,
        step=v.step,
        waiting=[{"seat": s, "name": names[s]} for s in sorted(waiting)],
        deadline=game.turn_deadline if playing else None,
        players=_players(game, v, seat, names, waited, tr),
        log=_log_lines(v, names, tr),
        last_bout=last_bout(v.history, names, tr),
        prompt=_prompt(game, v, seat, names, waited, tr) if playing else "",
        can_start=False,
    )
    if game.phase == "finished":
        base["result"] = _result(game, tr)
    return base


def _lobby_state(game: ChatGame, seat: int, names: list[str], tr: Translator) -> JsonDict:
    """A lobby's (or a cancelled lobby's) state: who sits where, no cards yet."""
    return dict(
        hand=[], legal=[], labels={}, table=[], trump=None, trump_suit=None, stock=0,
        discard=0, step=0, waiting=[], deadline=None, log=[], last_bout=None,
        players=[
            {"seat": i, "name": names[i], "cards": 0, "role": "player", "label": "",
             "me": i == seat, "computer": s.computer, "waiting": False, "taking": False}
            for i, s in enumerate(game.seats)
        ],
        prompt=plain(tr.t("lobby.hint")),
        can_start=game.phase == "lobby" and game.creator_id == game.seats[seat].user_id,
    )  # fmt: skip


def _players(
    game: ChatGame, v: PlayerView, seat: int, names: list[str], waiting: set[int], tr: Translator
) -> list[JsonDict]:
    """Each seat; ``waiting``: the seats the game waits on (the page marks those only)."""
    players = []
    taking = taker(v.history) if game.phase == "playing" else None
    for i, s in enumerate(game.seats):
        role = role_of(v, i)
        players.append(
            {
                "seat": i,
                "name": names[i],
                "cards": v.hand_sizes[i],
                "role": role,
                "label": _role_text(role, v.hand_sizes[i], tr),
                "me": i == seat,
                "computer": s.computer,
                "waiting": i in waiting,
                "taking": i == taking,
            }
        )
    return players


def _log_lines(v: PlayerView, names: list[str], tr: Translator) -> list[str]:
    """The last ``LOG_LINES`` public events (a long game has hundreds)."""
    lines: list[str] = []
    for event in reversed(v.history):
        line = event_line(event, names, tr)
        if line is not None:
            lines.append(line)
            if len(lines) == LOG_LINES:
                break
    lines.reverse()
    return lines


def moved_on(game_id: str, table: ChatGame, user_id: int) -> JsonDict:
    """A game that is no longer the chat's current one; ``next`` when the user sits in
    the one that replaced it (a rematch), so the page can follow."""
    seated = table.seat_of(user_id) is not None and table.phase != "cancelled"
    return {"game": game_id, "phase": "moved", "next": table.game_id if seated else None}
