"""The hand message in a player's private chat: only what its owner may know
(``engine.view``), with buttons for exactly the legal moves."""

from __future__ import annotations

from telegram import InlineKeyboardButton

from bot import callbacks
from bot.records import ChatGame
from bot.render.common import Rendered, chunks, markup
from bot.render.table import pairs_text
from engine import Attack, Beat, Card, Pass, PlayerView, Swap, Take, Transfer, view
from locales import Translator

CARDS_PER_ROW = 4


def _button(label: str, data: str) -> InlineKeyboardButton:
    return InlineKeyboardButton(label, callback_data=data)


def hand_message(
    game: ChatGame,
    seat: int,
    tr: Translator,
    *,
    pick: Card | None = None,
    confirm_leave: bool = False,
) -> Rendered:
    """The hand message of ``seat``: own cards, and buttons for exactly the legal moves."""
    if game.phase != "playing" or game.state is None:
        return hand_closed(game, tr)
    state = game.engine_state()
    v = view(state, seat)
    cid, gid, step = game.chat_id, game.game_id, v.step
    lines = [
        tr.t("hand.header", group=game.chat_title or str(cid)),
        tr.t("hand.trump", card=tr.card(v.trump_card)),
        tr.t("hand.cards", cards=tr.cards(v.hand)) if v.hand else tr.t("hand.no_cards"),
    ]
    if seat in v.out:
        lines.append(tr.t("hand.out"))
    if confirm_leave:
        lines.append(tr.t("hand.leave_confirm"))
        rows = [
            [
                _button(
                    tr.t("hand.leave_yes"), callbacks.encode_hand_op(cid, gid, step, "leave_yes")
                ),
                _button(tr.t("hand.back"), callbacks.encode_hand_op(cid, gid, step, "back")),
            ]
        ]
        return Rendered("\n".join(lines), markup(rows))
    if game.seats[seat].ai is not None:
        lines.append(tr.t("hand.ai_plays"))
        if game.seats[seat].left or seat in v.out:
            return Rendered("\n".join(lines))
        # No step in it: taking back is checked by game, and a step would make every
        # computer move re-edit this message.
        back = callbacks.encode_hand_op(cid, gid, 0, "take_back")
        return Rendered("\n".join(lines), markup([[_button(tr.t("hand.take_back"), back)]]))
    legal = v.legal_actions
    if legal and v.table:
        lines.append(tr.t("table.cards", pairs=pairs_text(v.table, tr)))
    rows = _move_rows(v, tr, cid, gid, pick)
    if pick is not None:
        lines.append(tr.t("hand.pick_target", card=tr.card(pick)))
    elif v.must_act.player == seat:
        lines.append(tr.t("hand.prompt_defend" if v.table else "hand.prompt_lead"))
    elif any(not isinstance(a, Swap) for a in legal):  # own hand: may know it can add
        lines.append(tr.t("hand.prompt_throw_in"))
    elif seat not in v.out:
        lines.append(tr.t("hand.wait"))
    if pick is None and seat not in v.out:
        rows.append(
            [_button(tr.t("hand.leave"), callbacks.encode_hand_op(cid, gid, step, "leave"))]
        )
    return Rendered("\n".join(lines), markup(rows))


def _move_rows(
    v: PlayerView, tr: Translator, cid: int, gid: str, pick: Card | None
) -> list[list[InlineKeyboardButton]]:
    step = v.step
    legal = v.legal_actions

    def move(label: str, action: object) -> InlineKeyboardButton:
        assert isinstance(action, Attack | Beat | Take | Pass | Transfer | Swap)
        return _button(label, callbacks.encode_move(cid, gid, step, action))

    if pick is not None:
        targets = [a for a in legal if isinstance(a, Beat) and a.card == pick]
        row = [move(tr.t("hand.beat_target", attack=tr.card(a.attack)), a) for a in targets]
        back = _button(tr.t("hand.back"), callbacks.encode_hand_op(cid, gid, step, "back"))
        return [*chunks(row, 3), [back]]
    singles = [a for a in legal if isinstance(a, Attack) and len(a.cards) == 1]
    order = {c: i for i, c in enumerate(v.hand)}
    singles.sort(key=lambda a: order.get(a.cards[0], 99))
    buttons = [move(tr.card(a.cards[0]), a) for a in singles]
    # Several cards of one rank at once: one button per rank, with as many as allowed.
    biggest: dict[int, Attack] = {}
    for a in legal:
        if isinstance(a, Attack) and len(a.cards) > 1:
            rank = a.cards[0].rank
            if rank not in biggest or len(a.cards) > len(biggest[rank].cards):
                biggest[rank] = a
    multi = [
        move(tr.cards(a.cards), a) for a in sorted(biggest.values(), key=lambda a: a.cards[0].rank)
    ]
    beats: dict[Card, list[Beat]] = {}
    for a in legal:
        if isinstance(a, Beat):
            beats.setdefault(a.card, []).append(a)
    beat_buttons = []
    for card in sorted(beats, key=lambda c: order.get(c, 99)):
        options = beats[card]
        if len(options) == 1:
            beat_buttons.append(
                move(
                    tr.t("hand.beat_with", card=tr.card(card), attack=tr.card(options[0].attack)),
                    options[0],
                )
            )
        else:
            beat_buttons.append(_button(tr.card(card), callbacks.encode_pick(cid, gid, step, card)))
    rows = [*chunks(buttons, CARDS_PER_ROW), *chunks(multi, 2), *chunks(beat_buttons, 3)]
    transfers = [
        move(tr.t("hand.transfer", card=tr.card(a.card)), a)
        for a in legal
        if isinstance(a, Transfer)
    ]
    rows.extend(chunks(transfers, 3))
    last: list[InlineKeyboardButton] = []
    if Take() in legal:
        last.append(move(tr.t("hand.take"), Take()))
    if Pass() in legal:
        last.append(move(tr.t("hand.pass"), Pass()))
    for a in legal:
        if isinstance(a, Swap):
            last.append(move(tr.t("hand.swap", card=tr.card(a.card)), a))
    rows.append(last)
    return rows


def hand_closed(game: ChatGame, tr: Translator) -> Rendered:
    return Rendered(tr.t("hand.closed", group=game.chat_title or str(game.chat_id)))
