"""Pure rendering: (record / view, translator) → HTML text + inline keyboard.

Nothing here talks to Telegram or Redis. The hand message shows only what its
owner may know (``engine.view``) and offers buttons for exactly the legal moves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot import callbacks
from bot.callbacks import GroupOp
from bot.flow import MAX_SEATS, required, series_over
from bot.records import Seat, StatLine, Table
from engine import Attack, Beat, Card, Pass, PlayerView, Swap, Take, Transfer, view
from engine.events import (
    Attacked,
    Beaten,
    Discarded,
    Passed,
    PickedUp,
    PlayerOut,
    Swapped,
    Took,
    Transferred,
)
from locales import Html, Translator, escape, how_to_play

MAX_TEXT = 4096
CARDS_PER_ROW = 4


@dataclass(frozen=True)
class Rendered:
    text: str
    markup: InlineKeyboardMarkup | None = None

    def digest(self) -> str:
        """Identifies the content, so an unchanged message is never edited."""
        payload = self.text + repr(self.markup.to_dict() if self.markup else None)
        return hashlib.blake2b(payload.encode(), digest_size=12).hexdigest()


def _fit(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _markup(rows: Iterable[Sequence[InlineKeyboardButton]]) -> InlineKeyboardMarkup | None:
    kept = [list(r) for r in rows if r]
    return InlineKeyboardMarkup(kept) if kept else None


def _chunks(buttons: list[InlineKeyboardButton], size: int) -> list[list[InlineKeyboardButton]]:
    return [buttons[i : i + size] for i in range(0, len(buttons), size)]


def seat_name(seat: Seat, tr: Translator) -> Html:
    if seat.user_id is None and seat.ai is not None:
        return tr.t(f"seat.ai_{seat.ai}")
    return escape(seat.name)


def deep_link(bot_username: str, payload: str) -> str:
    return f"https://t.me/{bot_username}?start={payload}"


# --- lobby ---------------------------------------------------------------------------------


def rules_summary(table: Table, tr: Translator) -> Html:
    r = table.rules
    return tr.t(
        "lobby.options",
        deck=r.deck_size,
        throw_in=tr.t(f"option.throw_in_{r.throw_in}"),
        transfer=tr.t("option.on" if r.transfer else "option.off"),
        series=r.series_length,
    )


def lobby(table: Table, tr: Translator, bot_username: str, unreachable: list[str]) -> Rendered:
    lines: list[str] = [tr.t("lobby.title"), rules_summary(table, tr)]
    if table.series_played:
        lines.append(
            tr.t(
                "lobby.series_progress",
                game=table.series_played + 1,
                total=table.rules.series_length,
            )
        )
    lines.append(tr.t("lobby.players", count=len(table.seats), max=MAX_SEATS))
    for i, seat in enumerate(table.seats, 1):
        lines.append(f"{i}. {seat_name(seat, tr)}")
    if unreachable:
        lines.append(tr.t("lobby.waiting_dm", names=", ".join(unreachable)))
    lines.append(tr.t("lobby.hint"))
    lines += ["", how_to_play(tr.lang)]
    gid = table.game_id

    def b(key: str, op: GroupOp, **kw: str | int) -> InlineKeyboardButton:
        return InlineKeyboardButton(tr.t(key, **kw), callback_data=callbacks.encode_group(gid, op))

    r = table.rules
    rows: list[list[InlineKeyboardButton]] = [
        [b("lobby.join", "join"), b("lobby.leave", "leave")],
        [
            b("lobby.ai_easy", "ai_easy"),
            b("lobby.ai_normal", "ai_normal"),
            b("lobby.ai_hard", "ai_hard"),
        ],
        [
            b("lobby.deck", "deck", deck=r.deck_size),
            b("lobby.throw_in", "throw_in", value=tr.t(f"option.throw_in_{r.throw_in}")),
        ],
        [
            b(
                "lobby.transfer",
                "transfer",
                value=tr.t("option.on" if r.transfer else "option.off"),
            ),
            b("lobby.series", "series", count=r.series_length),
        ],
    ]
    if any(s.user_id is None for s in table.seats):
        rows.append([b("lobby.remove_ai", "remove_ai")])
    rows.append([b("lobby.start", "start"), b("lobby.cancel", "cancel")])
    if unreachable:
        url = deep_link(bot_username, f"g{table.chat_id}")
        rows.append([InlineKeyboardButton(tr.t("lobby.open_dm"), url=url)])
    return Rendered(_fit("\n".join(lines)), _markup(rows))


def cancelled(tr: Translator) -> Rendered:
    return Rendered(tr.t("lobby.cancelled"))


# --- the table (group message) -------------------------------------------------------------


def _pairs(table: Sequence[tuple[Card, Card | None]], tr: Translator) -> str:
    return "  ".join(f"{tr.card(a)}/{tr.card(d) if d is not None else '…'}" for a, d in table)


def _event_line(event: object, names: list[Html], tr: Translator) -> Html | None:
    if isinstance(event, Attacked):
        return tr.t("event.attacked", name=names[event.player], cards=tr.cards(event.cards))
    if isinstance(event, Beaten):
        return tr.t(
            "event.beaten",
            name=names[event.player],
            attack=tr.card(event.attack),
            card=tr.card(event.card),
        )
    if isinstance(event, Transferred):
        return tr.t(
            "event.transferred",
            name=names[event.player],
            card=tr.card(event.card),
            target=names[event.to],
        )
    if isinstance(event, Took):
        return tr.t("event.took", name=names[event.player])
    if isinstance(event, Passed):
        return tr.t("event.passed", name=names[event.player])
    if isinstance(event, PickedUp):
        return tr.n("event.picked_up", len(event.cards), name=names[event.player])
    if isinstance(event, Discarded):
        return tr.n("event.discarded", len(event.cards))
    if isinstance(event, Swapped):
        return tr.t(
            "event.swapped",
            name=names[event.player],
            gave=tr.card(event.gave),
            got=tr.card(event.got),
        )
    if isinstance(event, PlayerOut):
        return tr.t("event.out", name=names[event.player])
    return None


def table_message(table: Table, tr: Translator, bot_username: str) -> Rendered:
    if table.phase == "finished":
        return results(table, tr)
    state = table.engine_state()
    v = view(state, 0)
    names = [seat_name(s, tr) for s in table.seats]
    lines: list[str] = [
        tr.t("table.title")
        if table.rules.series_length == 1
        else tr.t(
            "table.title_series", game=table.series_played + 1, total=table.rules.series_length
        )
    ]
    lines.append(
        tr.t(
            "table.status",
            trump=tr.card(v.trump_card),
            stock=v.stock_count,
            discard=v.discard_count,
        )
    )
    for i, seat in enumerate(table.seats):
        if i in v.out:
            role = tr.t("role.out")
        elif i == v.defender:
            role = tr.n("role.defender", v.hand_sizes[i])
        elif i == v.attacker:
            role = tr.n("role.attacker", v.hand_sizes[i])
        else:
            role = tr.n("role.player", v.hand_sizes[i])
        marker = "🤖 " if seat.ai is not None and seat.user_id is not None else ""
        lines.append(f"{marker}{names[i]} — {role}")
    lines.append(tr.t("table.cards", pairs=_pairs(v.table, tr)) if v.table else tr.t("table.empty"))
    must = required(state)
    if must:
        who = next(iter(must))
        key = "table.turn_defend" if v.table else "table.turn_lead"
        lines.append(tr.t(key, name=names[who]))
    elif v.waiting_for:
        lines.append(tr.t("table.turn_throw_in"))
    last = [ln for e in v.last_events if (ln := _event_line(e, names, tr)) is not None]
    if last:
        lines.append(tr.t("table.last", action=Html("; ".join(last[-3:]))))
    link = InlineKeyboardButton(tr.t("table.my_cards"), url=f"https://t.me/{bot_username}")
    return Rendered(_fit("\n".join(lines)), _markup([[link]]))


def results(table: Table, tr: Translator) -> Rendered:
    names = [seat_name(s, tr) for s in table.seats]
    lines: list[str] = [tr.t("result.title")]
    order = [s for s in table.final_order if s != table.final_durak]
    for place, seat in enumerate(order, 1):
        lines.append(f"{place}. {names[seat]}")
    if table.final_durak is None:
        lines.append(tr.t("result.draw"))
    else:
        lines.append(tr.t("result.durak", name=names[table.final_durak]))
    if table.rules.series_length > 1 and table.series_durak:
        lines.append(
            tr.t("result.series", game=table.series_played, total=table.rules.series_length)
        )
        ranked = sorted(range(len(table.seats)), key=lambda s: table.series_durak[s])
        for seat in ranked:
            lines.append(tr.n("result.series_line", table.series_durak[seat], name=names[seat]))
        if series_over(table):
            best = min(table.series_durak)
            winners = [names[s] for s in ranked if table.series_durak[s] == best]
            lines.append(tr.t("result.series_winner", names=Html(", ".join(winners))))
    key = "result.next_game" if not series_over(table) else "result.new_game"
    button = InlineKeyboardButton(
        tr.t(key), callback_data=callbacks.encode_group(table.game_id, "new")
    )
    return Rendered(_fit("\n".join(lines)), _markup([[button]]))


# --- the hand (private message) --------------------------------------------------------------


def _card_button(label: str, data: str) -> InlineKeyboardButton:
    return InlineKeyboardButton(label, callback_data=data)


def hand(
    table: Table,
    seat: int,
    tr: Translator,
    *,
    pick: Card | None = None,
    confirm_leave: bool = False,
) -> Rendered:
    """The hand message of ``seat``: own cards, and buttons for exactly the legal moves."""
    if table.phase != "playing" or table.state is None:
        return hand_closed(table, tr)
    state = table.engine_state()
    v = view(state, seat)
    cid, gid, step = table.chat_id, table.game_id, v.step
    lines = [
        tr.t("hand.header", group=table.chat_title or str(cid)),
        tr.t("hand.trump", card=tr.card(v.trump_card)),
        tr.t("hand.cards", cards=tr.cards(v.hand)) if v.hand else tr.t("hand.no_cards"),
    ]
    if seat in v.out:
        lines.append(tr.t("hand.out"))
    if confirm_leave:
        lines.append(tr.t("hand.leave_confirm"))
        rows = [
            [
                _card_button(
                    tr.t("hand.leave_yes"), callbacks.encode_hand_op(cid, gid, step, "leave_yes")
                ),
                _card_button(tr.t("hand.back"), callbacks.encode_hand_op(cid, gid, step, "back")),
            ]
        ]
        return Rendered(_fit("\n".join(lines)), _markup(rows))
    if table.seats[seat].ai is not None:
        lines.append(tr.t("hand.ai_plays"))
        if table.seats[seat].left or seat in v.out:
            return Rendered(_fit("\n".join(lines)))
        # No step in it: taking back is checked by game, and a step would make every
        # computer move re-edit this message.
        back = callbacks.encode_hand_op(cid, gid, 0, "take_back")
        return Rendered(
            _fit("\n".join(lines)), _markup([[_card_button(tr.t("hand.take_back"), back)]])
        )
    legal = v.legal_actions
    if legal and v.table:
        lines.append(tr.t("table.cards", pairs=_pairs(v.table, tr)))
    rows = _move_rows(v, tr, cid, gid, pick)
    if pick is not None:
        lines.append(tr.t("hand.pick_target", card=tr.card(pick)))
    elif seat in required(state):
        lines.append(tr.t("hand.prompt_defend" if v.table else "hand.prompt_lead"))
    elif any(not isinstance(a, Swap) for a in legal):
        lines.append(tr.t("hand.prompt_throw_in"))
    elif seat not in v.out:
        lines.append(tr.t("hand.wait"))
    if pick is None and seat not in v.out:
        rows.append(
            [_card_button(tr.t("hand.leave"), callbacks.encode_hand_op(cid, gid, step, "leave"))]
        )
    return Rendered(_fit("\n".join(lines)), _markup(rows))


def _move_rows(
    v: PlayerView, tr: Translator, cid: int, gid: str, pick: Card | None
) -> list[list[InlineKeyboardButton]]:
    step = v.step
    legal = v.legal_actions

    def move(label: str, action: object) -> InlineKeyboardButton:
        assert isinstance(action, Attack | Beat | Take | Pass | Transfer | Swap)
        return _card_button(label, callbacks.encode_move(cid, gid, step, action))

    if pick is not None:
        targets = [a for a in legal if isinstance(a, Beat) and a.card == pick]
        row = [move(tr.t("hand.beat_target", attack=tr.card(a.attack)), a) for a in targets]
        back = _card_button(tr.t("hand.back"), callbacks.encode_hand_op(cid, gid, step, "back"))
        return [*_chunks(row, 3), [back]]
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
            beat_buttons.append(
                _card_button(tr.card(card), callbacks.encode_pick(cid, gid, step, card))
            )
    rows = [*_chunks(buttons, CARDS_PER_ROW), *_chunks(multi, 2), *_chunks(beat_buttons, 3)]
    transfers = [
        move(tr.t("hand.transfer", card=tr.card(a.card)), a)
        for a in legal
        if isinstance(a, Transfer)
    ]
    rows.extend(_chunks(transfers, 3))
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


def hand_closed(table: Table, tr: Translator) -> Rendered:
    return Rendered(tr.t("hand.closed", group=table.chat_title or str(table.chat_id)))


# --- stats, language ------------------------------------------------------------------------


def group_stats(lines: list[StatLine], tr: Translator) -> Rendered:
    if not lines:
        return Rendered(tr.t("stats.none"))
    ordered = sorted(lines, key=lambda s: (-s.played, s.durak, -s.first, s.name))
    out = [tr.t("stats.title")]
    for s in ordered[:50]:
        out.append(tr.t("stats.line", name=s.name, played=s.played, durak=s.durak, first=s.first))
    return Rendered(_fit("\n".join(out)))


def user_stats(line: StatLine, tr: Translator) -> Rendered:
    return Rendered(tr.t("stats.mine", played=line.played, durak=line.durak, first=line.first))


def language_picker(tr: Translator, langs: Sequence[str], names: Sequence[str]) -> Rendered:
    buttons = [
        InlineKeyboardButton(name, callback_data=callbacks.encode_language(lang))
        for lang, name in zip(langs, names, strict=True)
    ]
    return Rendered(tr.t("language.pick"), _markup(_chunks(buttons, 2)))
