"""Every message the bot renders is HTML Telegram accepts, within its length limit,
whatever names people choose (issue 15, item 6)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import render
from bot.domain import flow
from bot.domain.flow import Moment, Person, Timing
from bot.domain.place import Place
from bot.domain.records import ChatGame, StatLine
from bot.render import Rendered
from bot.render.common import MAX_TEXT, fit
from engine import GameResult, Rules, legal_actions
from locales import SUPPORTED, Translator, language_name, translator
from sandbox.emulator.telegram_html import parse_html, utf16_len

CHAT, GID = -1001, "ht0001"
T0 = Moment(0.0, Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=0.0))
HOSTILE = ("&<>\"' \u202e\u200f👨\u200d👩\u200d👧 <b>&amp;</b> " * 10)[:95]
TITLE = ("&<\u202eClub👨\u200d👩\u200d👧 " * 20)[:128]


def hostile(i: int) -> str:
    return f"{i}{HOSTILE}"[:95]


def accepted(content: Rendered) -> None:
    """Telegram's parser takes it, and its visible text fits one message."""
    parsed = parse_html(content.text)  # raises HtmlParseError like "can't parse entities"
    assert utf16_len(parsed.text) <= MAX_TEXT
    assert utf16_len(content.text) <= MAX_TEXT


def full_lobby(rules: Rules) -> ChatGame:
    game, _ = flow.new_lobby(None, T0, Place(CHAT), TITLE, Person(1, hostile(1)), GID)
    game.rules = rules
    for uid in range(2, 7):
        game, _ = flow.join(game, T0, GID, Person(uid, hostile(uid)))
    return game


def played(game: ChatGame, moves: int) -> ChatGame:
    """``moves`` moves (the first legal one of whoever may move) into the game."""
    for _ in range(moves):
        if game.phase != "playing":
            break
        state = game.engine_state()
        seat = next(p for p in range(len(game.seats)) if legal_actions(state, p))
        uid = game.seats[seat].user_id
        action = legal_actions(state, seat)[-1]
        if game.seats[seat].computer or uid is None:
            game, _ = flow.ai_move(game, T0, GID, seat, state.step, action)
        else:
            game, _ = flow.play(game, T0, GID, uid, state.step, action)
    return game


def every_message(tr: Translator) -> Iterator[Rendered]:
    rules = Rules(deck_size=52, variant="perevodnoy", series_length=3, partners=True)
    lobby = full_lobby(rules)
    unreachable = [s.user_id for s in lobby.seats if s.user_id is not None]
    yield render.lobby_message(lobby, tr, "durak_bot", unreachable)
    yield render.cancelled(tr)
    game, _ = flow.start(lobby.model_copy(deep=True), T0, GID, 1, [])
    for moves in (0, 3, 9, 25):
        game = played(game, moves)
        if game.phase == "playing":
            yield render.table_message(game, tr, "durak_bot")
            for seat in range(len(game.seats)):
                yield render.hand_message(game, seat, tr)
                yield render.hand_message(game, seat, tr, confirm_leave=True)
                hand = game.engine_state().hand(seat)
                if hand:
                    yield render.hand_message(game, seat, tr, pick=hand[0])
    # A seat played by the computer, a closed hand, a leaver.
    game, effects = flow.leave_game(game, T0, GID, 2)
    for note in effects.announce:
        yield Rendered(tr.t(note.key, **note.kwargs))
    for seat in range(len(game.seats)):
        yield render.hand_message(game, seat, tr)
        yield render.hand_closed(game, tr)
    # Results: partners, a plain durak, a draw, the end of a series.
    finished = played(game, 10_000)
    yield render.table_message(finished, tr, "durak_bot")
    plain = finished.model_copy(deep=True)
    plain.final_losing_team = None
    yield render.results_message(plain, tr)
    plain.final_durak = None
    yield render.results_message(plain, tr)
    assert finished.series is not None
    over = finished.model_copy(deep=True)
    over.series = finished.series.record(GameResult(1, (0, 2, 3, 4, 5, 1))).record(
        GameResult(None, (0, 1, 2, 3, 4, 5))
    )
    yield render.results_message(over, tr)
    next_lobby, _ = flow.next_game(finished, T0, GID, "ht0002")
    yield render.lobby_message(next_lobby, tr, "durak_bot", [])
    # Stats, the language picker, the announcements and replies that carry names.
    lines = [StatLine(user_id=i, name=hostile(i), played=i, durak=1, first=2) for i in range(80)]
    yield render.group_stats(lines, tr)
    yield render.user_stats(lines[3], tr)
    yield render.language_picker(tr, SUPPORTED, [language_name(lang) for lang in SUPPORTED])
    for key in ("group.handed_to_ai", "group.player_left", "group.player_back", "rules.sent_dm"):
        yield Rendered(tr.t(key, name=lobby.seats[0].shown_name))
    yield Rendered(tr.t("start.linked", group=TITLE))


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_message_with_hostile_names_is_valid_html(lang: str) -> None:
    rendered = list(every_message(translator(lang)))
    assert len(rendered) > 40
    for content in rendered:
        accepted(content)
    # The names really were hostile, and shown escaped (never as markup).
    lobby = rendered[0].text
    assert "&amp;&lt;&gt;" in lobby and "\u202e" not in lobby


@given(
    st.lists(
        st.sampled_from(["<b>", "</b>", "<i>x</i>", "&amp;", "&lt;", "a", "👨\u200d👩", "é", "\n"]),
        max_size=400,
    ),
    st.integers(1, 300),
)
def test_a_cut_never_lands_inside_a_tag_or_entity(parts: list[str], limit: int) -> None:
    # Balanced input, as every message is before it is cut.
    text = "".join(parts).replace("<b>", "").replace("</b>", "")
    text = "<b>" + text + "</b>"
    cut = fit(text, limit)
    parse_html(cut)
    if utf16_len(text) <= limit:
        assert cut == text
    else:
        assert utf16_len(cut) <= limit
        assert re.fullmatch(r".*…(</[a-z]+>)*", cut, re.DOTALL), cut


def test_long_messages_are_cut_and_stay_valid() -> None:
    text = "<b>" + "&amp;" * 2000 + "</b>" + "<i>" + "x" * 3000 + "</i>"
    content = Rendered(text)
    accepted(content)
    assert content.text.endswith("…</b>") and "<i>" not in content.text
