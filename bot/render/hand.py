"""The hand message in a player's private chat: only what its owner may know
(``engine.view``): the table compactly, whose move it is and the time left, the other
players' card counts, the own cards by suit, and buttons for exactly the legal moves."""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.domain import callbacks
from bot.domain.place import Place
from bot.domain.rating import ResultLine
from bot.domain.records import ChatGame
from bot.render import faces
from bot.render.common import Rendered, button_names, markup, place_title, seat_names
from bot.render.labels import ROW_WIDTH, label_width, pack
from bot.render.log import meanwhile
from bot.render.rating import rating_change
from bot.render.results import hand_result
from bot.render.review import review_button
from bot.render.table import pairs_text
from bot.render.turn import clock, exact_clock, turn_line
from engine import Action, Attack, Beat, Card, Pass, PlayerView, Swap, Take, Transfer, view
from engine.core import transfer_target
from locales import Html, Translator

CARDS_PER_ROW = 8
"""One suit per row: a card label (``10♥️``) is 4 wide, and 34 // 8 = 4."""


def _button(label: str, data: str) -> InlineKeyboardButton:
    return InlineKeyboardButton(label, callback_data=data)


class _Text:
    """The hand's lines: the player's own (cards, prompt) and the table's context.

    Only the own lines and the keyboard (less its buttons' steps: see
    ``Rendered.digest``) make the digest: the context (table, turn, counts, clock)
    rides along whenever the hand is edited anyway, and never causes an edit itself,
    so showing it costs no Bot API call."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.own: list[str] = []

    def context(self, line: str) -> None:
        self.lines.append(line)

    def mine(self, line: str, clock: str = "") -> None:
        self.lines.append(line + clock)
        self.own.append(line)

    def rendered(self, keyboard: InlineKeyboardMarkup | None = None) -> Rendered:
        return Rendered("\n".join(self.lines), keyboard, stable="\n".join(self.own))


def hand_message(
    game: ChatGame,
    seat: int,
    tr: Translator,
    *,
    pick: Card | None = None,
    confirm_leave: bool = False,
    now: float | None = None,
) -> Rendered:
    """The hand message of ``seat``: own cards, and buttons for exactly the legal moves."""
    if game.phase != "playing" or game.state is None:
        return hand_closed(game, tr, seat)
    state = game.engine_state()
    v = view(state, seat)
    names = seat_names(game.seats, tr)
    text = _Text()
    _table_context(text, game, v, names, tr)
    news = meanwhile(state, seat, names, tr, set(game.auto_steps))
    if news is not None:
        text.context(tr.t("hand.meanwhile", events=news))
    cards = faces.grouped(tr, v.hand, v.trump)
    mine = tr.t("hand.cards", cards=cards) if v.hand else tr.t("hand.no_cards")
    if seat in v.out:
        text.mine(mine)
        text.mine(tr.t("hand.out"))
        return text.rendered()
    if confirm_leave:
        return _confirm_leave(text, game, v, mine, tr)
    if game.seats[seat].ai is not None:
        return _computer_plays(text, game, seat, mine, tr)
    _turn_lines(text, game, v, names, tr, pick, now)
    text.mine(mine)
    place, gid = game.place, game.game_id
    transferring = any(isinstance(a, Transfer) for a in v.legal_actions)
    target = transfer_target(state) if transferring else None  # public: seats and table
    rows = _move_rows(v, tr, place, gid, pick, _Targets(button_names(game.seats, tr), target))
    if pick is None and v.hand:
        # With no cards left (yet not out) leaving would only make this player the durak.
        leave = callbacks.encode_hand_op(place, gid, v.step, "leave")
        rows.append([_button(tr.t("hand.leave"), leave)])
    return text.rendered(markup(rows))


def _table_context(
    text: _Text, game: ChatGame, v: PlayerView, names: list[Html], tr: Translator
) -> None:
    """Which group's game, and what its table shows (context: never edits by itself)."""
    text.mine(tr.t("hand.header", group=place_title(game, tr)))
    status = tr.t(
        "table.status",
        trump=faces.card(tr, v.trump_card),
        stock=v.stock_count,
        discard=v.discard_count,
    )
    text.context(status)
    text.context(tr.t("hand.counts", counts=_counts(v, names)))
    if v.table:
        text.context(tr.t("table.cards", pairs=pairs_text(v.table, tr)))


def _confirm_leave(
    text: _Text, game: ChatGame, v: PlayerView, mine: str, tr: Translator
) -> Rendered:
    """Leave was tapped: Yes, or Back to the moves."""
    place, gid, step = game.place, game.game_id, v.step
    text.mine(mine)
    text.mine(tr.t("hand.leave_confirm"))
    rows = [
        [
            _button(
                tr.t("hand.leave_yes"), callbacks.encode_hand_op(place, gid, step, "leave_yes")
            ),
            _button(tr.t("hand.back"), callbacks.encode_hand_op(place, gid, step, "back")),
        ]
    ]
    return text.rendered(markup(rows))


def _computer_plays(text: _Text, game: ChatGame, seat: int, mine: str, tr: Translator) -> Rendered:
    """The computer plays this seat (missed moves, or left): take it back, if not left."""
    text.mine(mine)
    text.mine(tr.t("hand.ai_plays"))
    if game.seats[seat].left:
        return text.rendered()
    # No step in it: taking back is checked by game, and a step would make every
    # computer move re-edit this message.
    back = callbacks.encode_hand_op(game.place, game.game_id, 0, "take_back")
    return text.rendered(markup([[_button(tr.t("hand.take_back"), back)]]))


def _turn_lines(
    text: _Text,
    game: ChatGame,
    v: PlayerView,
    names: list[Html],
    tr: Translator,
    pick: Card | None,
    now: float | None,
) -> None:
    """What this player is asked to do now, with the time left."""
    seat, legal, turn = v.player, v.legal_actions, v.must_act
    reminded = game.reminded_step == v.step
    # The reminder is a new message: its seconds are true when it arrives.
    ticking = (exact_clock if reminded else clock)(tr, game.turn_deadline, now)
    taker = v.defender if v.taking and turn.kind == "throw_in" else None
    if pick is not None:
        text.mine(tr.t("hand.pick_target", card=faces.card(tr, pick)), ticking)
    elif turn.player == seat:
        text.mine(turn_line(turn, names, tr, me=seat), ticking)
        if reminded:
            text.mine(tr.t("hand.reminder"))
    else:
        if any(not isinstance(a, Swap) for a in legal):  # own hand: may know it can add
            text.mine(
                _add_prompt(turn.kind, taker, names, tr), ticking if turn.player is None else ""
            )
        # During a throw-in window the prompt above says it all.
        if turn.kind != "over" and not (turn.kind == "throw_in" and legal):
            text.context(turn_line(turn, names, tr, me=seat, taker=taker) + ticking)


def _add_prompt(kind: str, taker: int | None, names: list[Html], tr: Translator) -> Html:
    """What an attacker who may add cards is told: while the defender still beats, only
    that they may add; once done, that Done ends it; after a take, that they take."""
    if taker is not None:
        return tr.t("hand.prompt_taking", name=names[taker])
    if kind == "throw_in":
        return tr.t("hand.prompt_add_done")
    return tr.t("hand.prompt_add")


def _counts(v: PlayerView, names: list[Html]) -> Html:
    """The other players' card counts, in seat order from the next one on."""
    n = v.num_players
    others = [(v.player + k) % n for k in range(1, n)]
    return Html(" · ".join(f"{names[s]} {v.hand_sizes[s]}" for s in others))


Move = Callable[[str, Action], InlineKeyboardButton]
"""A button for a move: its label and its action."""


@dataclass(frozen=True)
class _Targets:
    """Whom the buttons name: the seats' names, and who would defend after a transfer."""

    names: list[Html]
    transfer_to: int | None


def _label(text: str) -> str:
    """A catalogue text as a button label: plain text (labels are not HTML)."""
    return html.unescape(text)


def _named_label(make: Callable[[str], str], name: str) -> str:
    """``make(name)`` as a label, the name cut ("Alexand…") until it fits a row alone."""
    label = _label(make(name))
    plain = _label(name)
    while label_width(label) > ROW_WIDTH and len(plain) > 1:
        plain = plain[:-1]
        label = _label(make(_escape_name(plain + "…")))
    return label


def _escape_name(name: str) -> str:
    return html.escape(name, quote=False)


def _move_rows(
    v: PlayerView,
    tr: Translator,
    place: Place,
    gid: str,
    pick: Card | None,
    seats: _Targets,
) -> list[list[InlineKeyboardButton]]:
    step = v.step
    legal = v.legal_actions

    def move(label: str, action: Action) -> InlineKeyboardButton:
        return _button(label, callbacks.encode_move(place, gid, step, action))

    if pick is not None:
        targets = [a for a in legal if isinstance(a, Beat) and a.card == pick]
        row = [move(tr.t("hand.beat_target", attack=faces.card(tr, a.attack)), a) for a in targets]
        back = _button(tr.t("hand.back"), callbacks.encode_hand_op(place, gid, step, "back"))
        return [*pack(row, 4), [back]]
    rows = _attack_rows(v, tr, move)
    pick_data = functools.partial(callbacks.encode_pick, place, gid, step)
    rows += pack(_beat_buttons(v, tr, move, pick_data))
    rows += pack(_transfer_buttons(v, tr, move, seats))
    rows += pack(_last_buttons(v, tr, move))
    return rows


def _transfer_buttons(
    v: PlayerView, tr: Translator, move: Move, targets: _Targets
) -> list[InlineKeyboardButton]:
    """ "Transfer Q♥️ → Vera": the card, and who defends next."""
    transfers = {a.card: a for a in v.legal_actions if isinstance(a, Transfer)}
    buttons = []
    for c in faces.hand_order(transfers, v.trump):
        card = faces.card(tr, c)
        if targets.transfer_to is None:
            label = _label(tr.t("hand.transfer", card=card))
        else:

            def make(name: str, card: str = card) -> str:
                return tr.t("hand.transfer_to", card=card, name=Html(name))

            label = _named_label(make, targets.names[targets.transfer_to])
        buttons.append(move(label, transfers[c]))
    return buttons


def _attack_rows(v: PlayerView, tr: Translator, move: Move) -> list[list[InlineKeyboardButton]]:
    """Single cards one row per suit (trumps last), ascending: the hand as it is held;
    then several cards of one rank at once: one button per rank, with as many as allowed."""
    legal = v.legal_actions
    singles = {a.cards[0]: a for a in legal if isinstance(a, Attack) and len(a.cards) == 1}
    rows: list[list[InlineKeyboardButton]] = []
    for group in faces.suit_groups(singles, v.trump):
        rows += pack([move(faces.card(tr, c), singles[c]) for c in group], CARDS_PER_ROW)
    biggest: dict[int, Attack] = {}
    for a in legal:
        if isinstance(a, Attack) and len(a.cards) > 1:
            rank = a.cards[0].rank
            if rank not in biggest or len(a.cards) > len(biggest[rank].cards):
                biggest[rank] = a
    multi = [
        move(
            tr.t("hand.attack_cards", cards=faces.cards(tr, faces.hand_order(a.cards, v.trump))), a
        )
        for a in sorted(biggest.values(), key=lambda a: a.cards[0].rank)
    ]
    rows += pack(multi)
    return rows


def _beat_buttons(
    v: PlayerView, tr: Translator, move: Move, pick_data: Callable[[Card], str]
) -> list[InlineKeyboardButton]:
    """One button per card that can beat: the beat itself when it has one target, else a
    pick (its targets are asked next)."""
    beats: dict[Card, list[Beat]] = {}
    for a in v.legal_actions:
        if isinstance(a, Beat):
            beats.setdefault(a.card, []).append(a)
    buttons = []
    for card in faces.hand_order(beats, v.trump):
        options = beats[card]
        if len(options) == 1:
            label = tr.t(
                "hand.beat_with",
                card=faces.card(tr, card),
                attack=faces.card(tr, options[0].attack),
            )
            buttons.append(move(label, options[0]))
        else:
            # Not a card to play: it asks which card to beat next.
            label = tr.t("hand.beat_pick", card=faces.card(tr, card))
            buttons.append(_button(label, pick_data(card)))
    return buttons


def _last_buttons(v: PlayerView, tr: Translator, move: Move) -> list[InlineKeyboardButton]:
    """Take, Done and the trump swaps. An attacker's pass only ends something once the
    defender is done (every card beaten, or taking): then it is "Done"; while the
    defender still beats it is no button at all."""
    legal: Sequence[Action] = v.legal_actions
    last: list[InlineKeyboardButton] = []
    if Take() in legal:
        last.append(move(tr.t("hand.take"), Take()))
    if Pass() in legal and v.must_act.kind != "defend":
        last.append(move(tr.t("hand.done"), Pass()))
    trump = faces.card(tr, v.trump_card)
    for a in legal:
        if isinstance(a, Swap):
            last.append(move(tr.t("hand.swap_for", card=faces.card(tr, a.card), trump=trump), a))
    return last


def finished_hand(
    game: ChatGame, seat: int, tr: Translator, rating: ResultLine | None, min_games: int
) -> Rendered:
    """A finished game's hand message: the player's one-line result, their rating change
    when the game was rated, and ``finished_hand_rows`` (no game buttons any more)."""
    text = hand_result(game, seat, tr).text
    if rating is not None:
        text += "\n" + rating_change(rating, tr, min_games)
    return Rendered(text, markup(finished_hand_rows(game, seat, tr)))


def finished_hand_rows(
    game: ChatGame, seat: int, tr: Translator
) -> list[list[InlineKeyboardButton]]:
    """The buttons under a finished game's result: none of the game's (its moves and its
    table are over), only what is about the game that was played: its 🔍 Review."""
    return [[review_button(game.place, game.game_id, tr)]]


def hand_gone(game: ChatGame, tr: Translator) -> Rendered:
    """A game ended because its place refuses the bot's messages (``flow.place_gone``):
    no buttons, and where it was, so the player knows which game."""
    return Rendered(tr.t("hand.place_gone", group=place_title(game, tr)))


def hand_closed(game: ChatGame, tr: Translator, seat: int | None = None) -> Rendered:
    """After the game: this player's own one-line result (or a plain note)."""
    if game.phase == "finished" and seat is not None:
        rows = finished_hand_rows(game, seat, tr)
        return Rendered(hand_result(game, seat, tr).text, markup(rows))
    return Rendered(tr.t("hand.closed", group=place_title(game, tr)))
