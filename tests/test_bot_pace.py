"""Issue 11, the table's pace and the /rules sections, on the pure parts: the pace is a
lobby option of the chat's game record (not a rule), old records load without it, one
function turns it into seconds, and /rules offers every full section."""

from __future__ import annotations

import json
from pathlib import Path

import fakeredis
import pytest

from bot import render
from bot.domain import callbacks, flow
from bot.domain.callbacks import RulesButton
from bot.domain.flow import Moment, Person, Timing
from bot.domain.flow.turns import ACTIVE_THROW_IN_FACTOR
from bot.domain.lobby_options import OPTIONS_BY_OP
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.domain.roles import hand_role
from bot.render.labels import too_wide
from bot.store.storage import Owed, Storage, Write, table_key
from engine import Attack, Beat, Rules, Take, legal_actions, must_act
from locales import SUPPORTED, translator, visible_text
from locales.rules_text import SECTIONS, SHORT_LIMIT, TablePace, rules_short, rules_text

CHAT = -100888
GID = "pa11ce"
TIMING = Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=20.0, throw_in_window=7.0)
LONG = ACTIVE_THROW_IN_FACTOR * TIMING.throw_in_window
"""The throw-in window of an attacker who moved lately (every attacker in these games)."""
ANN, BOB = Person(1, "Ann"), Person(2, "Bob")
FIXTURES = Path(__file__).parent / "fixtures" / "records" / "v1"


def at(now: float) -> Moment:
    return Moment(now, TIMING)


def lobby() -> ChatGame:
    game, _ = flow.new_lobby(None, at(0.0), Place(CHAT), "Club", ANN, GID)
    game, _ = flow.join(game, at(0.0), GID, BOB)
    return game


def paced(game: ChatGame, pace: str) -> ChatGame:
    while game.pace != pace:
        game, _ = flow.change_option(game, at(0.0), GID, ANN.user_id, "pace")
    return game


# --- the record ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("table_*.json")), ids=lambda p: p.stem)
async def test_a_record_stored_without_a_pace_loads_as_normal(path: Path) -> None:
    raw = path.read_text()
    assert "pace" not in json.loads(raw)  # written before the field existed
    storage = Storage(fakeredis.aioredis.FakeRedis(), finished_ttl=60, idle_ttl=60)
    chat_id = json.loads(raw)["chat_id"]
    await storage.redis.set(table_key(Place(chat_id)), raw)
    game = await storage.load_table(Place(chat_id))
    assert game is not None and game.pace == "normal"
    assert game.schema_version == 1  # additive: no new schema version
    # Written back as it was (a normal pace is left out, so code from before the field
    # still reads it), and read the same.
    stored = json.loads(game.to_json())
    assert "pace" not in stored
    assert ChatGame.model_validate_json(game.to_json()) == game
    # Another pace is stored, and read back.
    fast = game.model_copy(update={"pace": "fast"})
    assert json.loads(fast.to_json())["pace"] == "fast"
    assert ChatGame.model_validate_json(fast.to_json()).pace == "fast"


# --- the lobby option --------------------------------------------------------------------


def test_the_pace_cycles_normal_fast_relaxed_and_keeps_the_series_and_rules() -> None:
    game = lobby()
    game.rules = Rules(deck_size=24, series_length=3)
    game, _ = flow.start(game, at(0.0), GID, ANN.user_id, [])
    flow.finish(game, game.engine_state(), flow.Effects(), early=True, now=100.0)
    game, _ = flow.next_game(game, at(100.0), GID, "pa11cf")
    series = game.series
    assert series is not None and game.games_played == 1
    seen = []
    for _ in range(3):
        seen.append(game.pace)
        game, _ = flow.change_option(game, at(100.0), "pa11cf", ANN.user_id, "pace")
        assert game.series == series, "the pace is how the table runs, not a rule"
        assert game.rules == Rules(deck_size=24, series_length=3)
    assert seen == ["normal", "fast", "relaxed"] and game.pace == "normal"
    # Other options still restart the series.
    game, _ = flow.change_option(game, at(100.0), "pa11cf", ANN.user_id, "deck")
    assert game.series is None


def test_the_pace_carries_to_the_next_lobby_and_shows_in_it() -> None:
    game = paced(lobby(), "fast")
    en = translator("en")
    shown = render.lobby_message(game, en, "bot", [])
    assert "Pace: fast" in shown.text
    options = render.lobby_message(game.model_copy(update={"lobby_screen": "options"}), en, "", [])
    labels = [b.text for row in options.markup.inline_keyboard for b in row]  # type: ignore[union-attr]
    assert {"Pace", "normal", "✓ fast", "relaxed"} <= set(labels)
    data = callbacks.encode_group(GID, "pace")
    assert callbacks.decode(data) == callbacks.GroupButton(GID, "pace")
    game, _ = flow.start(game, at(0.0), GID, ANN.user_id, [])
    flow.finish(game, game.engine_state(), flow.Effects(), early=True, now=50.0)
    rematch, _ = flow.next_game(game.model_copy(deep=True), at(60.0), GID, "pa11cg")
    fresh, _ = flow.fresh_lobby(game.model_copy(deep=True), at(60.0), GID, BOB, "pa11ch")
    after, _ = flow.new_lobby(
        game.model_copy(deep=True), at(60.0), Place(CHAT), "Club", BOB, "pa11ci"
    )
    assert rematch.pace == fresh.pace == after.pace == "fast"


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_pace_label_fits_and_is_translated(lang: str) -> None:
    tr = translator(lang)
    option = OPTIONS_BY_OP["pace"]
    labels = set()
    game = lobby()
    for _ in option.values:
        rows = render.lobby_message(game, tr, "bot", []).markup.inline_keyboard  # type: ignore[union-attr]
        assert too_wide(rows) == []
        labels.add(render.lobby.option_label(option, game, tr))
        game = option.following(game)
    assert len(labels) == 3  # a distinct text per value
    if lang != "en":
        english = translator("en")
        assert labels.isdisjoint(
            {render.lobby.option_label(option, paced(lobby(), p), english) for p in ("fast",)}
        )


# --- one place turns the pace into seconds ---------------------------------------------------


def test_table_timing_scales_the_human_clocks_only() -> None:
    game = lobby()
    assert flow.table_timing(game, TIMING) == TIMING
    fast = flow.table_timing(paced(game, "fast"), TIMING)
    relaxed = flow.table_timing(paced(game, "relaxed"), TIMING)
    assert (fast.turn_timeout, fast.throw_in_window, fast.remind_before) == (30.0, 3.5, 7.5)
    assert (relaxed.turn_timeout, relaxed.throw_in_window) == (120.0, 14.0)
    assert relaxed.remind_before == 30.0
    assert fast.ai_delay == relaxed.ai_delay == TIMING.ai_delay
    assert fast.notify_quiet == TIMING.notify_quiet


@pytest.mark.parametrize(("pace", "factor"), [("normal", 1.0), ("fast", 0.5), ("relaxed", 2.0)])
def test_the_flow_schedules_turns_and_throw_in_windows_at_the_tables_pace(
    pace: str, factor: float
) -> None:
    game = paced(lobby(), pace)
    game, _ = flow.start(game, at(0.0), GID, ANN.user_id, [])
    state = game.engine_state()
    assert game.turn_deadline == TIMING.turn_timeout * factor
    # The reminder before a timeout keeps its share of the turn.
    assert game.reminder_due == (TIMING.turn_timeout - TIMING.remind_before) * factor
    # Play on until the defender is done and only throw-ins are left.
    now = 0.0
    while must_act(state).kind != "throw_in":
        seat = must_act(state).player
        assert seat is not None and not state.over
        actions = legal_actions(state, seat)
        beats = [a for a in actions if isinstance(a, Beat)]
        action = beats[0] if beats else actions[0]
        now += 1.0
        user = game.seats[seat].user_id
        assert user is not None
        game, _ = flow.play(game, at(now), GID, user, state.step, action)
        state = game.engine_state()
        if must_act(state).kind != "throw_in":
            assert game.turn_deadline == now + TIMING.turn_timeout * factor
    assert game.turn_deadline == now + LONG * factor
    # The window closes then: the bot passes for the idle attacker.
    before = state.step
    game, _ = flow.on_timeout(game, at(now + LONG * factor))
    assert game.engine_state().step > before and game.auto_steps


def pair_then_take(game: ChatGame) -> ChatGame:
    """Start ``game``; the attacker leads a card they hold a pair of (so they could throw
    in), the defender takes at 2.0: only the attacker's throw-in window is left."""
    game, _ = flow.start(game, at(0.0), GID, ANN.user_id, [])
    state = game.engine_state()
    attacker = state.attacker
    hand = state.hand(attacker)
    lead = next(
        a
        for a in legal_actions(state, attacker)
        if isinstance(a, Attack)
        and len(a.cards) == 1
        and sum(c.rank == a.cards[0].rank for c in hand) > 1
    )
    user = game.seats[attacker].user_id
    assert user is not None
    game, _ = flow.play(game, at(1.0), GID, user, state.step, lead)
    state = game.engine_state()
    defender = game.seats[state.defender].user_id
    assert defender is not None
    game, _ = flow.play(game, at(2.0), GID, defender, state.step, Take())
    return game


def test_a_fast_game_throw_in_window_is_half_a_normal_one_in_the_same_deal() -> None:
    """The same deal and moves (a lead the attacker holds a pair of, then Take): only
    the window differs."""

    def window(pace: str) -> float:
        game = pair_then_take(paced(lobby(), pace))
        assert must_act(game.engine_state()).kind == "throw_in"
        assert game.turn_deadline is not None
        return game.turn_deadline - 2.0

    assert window("normal") == LONG
    assert window("fast") == LONG / 2
    assert window("relaxed") == LONG * 2


# --- /rules: the brief and every full section ---------------------------------------------


@pytest.mark.parametrize("lang", SUPPORTED)
def test_short_rules_name_the_tables_pace_and_stay_short(lang: str) -> None:
    tr = translator(lang)
    game = paced(lobby(), "fast")
    game.rules = Rules(variant="perevodnoy", trump_swap=True, deck_size=52)
    message = render.rules_message(game, TIMING, tr)
    pace = TablePace("fast", 30.0, 3.5)
    assert message.text == rules_short(game.rules, lang, pace)
    assert len(visible_text(message.text)) <= SHORT_LIMIT
    line = tr.t("rules.options.pace", pace=tr.t("option.pace_fast"), turn="30", window="")
    assert visible_text(line).split("(")[0] in visible_text(message.text)
    assert render.rules_message(None, TIMING, tr).text == rules_short(Rules(), lang)


@pytest.mark.parametrize("lang", SUPPORTED)
def test_the_rules_buttons_reach_every_full_section(lang: str) -> None:
    tr = translator(lang)
    game = lobby()
    rows = render.rules_message(game, TIMING, tr).markup.inline_keyboard  # type: ignore[union-attr]
    assert too_wide(rows) == []
    decoded = [callbacks.decode(str(b.callback_data)) for row in rows for b in row]
    assert decoded[0] == RulesButton(Place(CHAT))  # all the rules first
    assert decoded[1:] == [RulesButton(Place(CHAT), section) for section in SECTIONS]
    assert [b.text for row in rows for b in row][1:] == [
        tr.t(f"rules.button.{s}") for s in SECTIONS
    ]
    for section in SECTIONS:
        assert callbacks.decode(callbacks.encode_rules(Place(CHAT), section)).section == section  # type: ignore[union-attr]
    with pytest.raises(callbacks.CallbackError):
        callbacks.decode(f"r:{CHAT}:z")


@pytest.mark.parametrize("lang", SUPPORTED)
def test_each_section_follows_the_games_rules(lang: str) -> None:
    plain, rich = Rules(), Rules(variant="perevodnoy", trump_swap=True, series_length=3)
    tr = translator(lang)
    whole = visible_text("\n\n".join(rules_text(rich, lang)))
    titles = {visible_text(tr.t(f"rules.{s}.title")) for s in ("goal", "beating", "taking")}
    for section in SECTIONS:
        texts = rules_text(rich, lang, section=section)
        assert texts and all(visible_text(t) for t in texts)
        for text in texts:
            # Every paragraph of a section is a paragraph of the whole rules.
            for paragraph in visible_text(text).split("\n"):
                assert paragraph in whole or paragraph in titles, (section, paragraph)
    # The transfer rule is where beating is explained, and only in a transfer game.
    transfer = visible_text(tr.t("rules.transfer.body"))
    assert transfer in visible_text("".join(rules_text(rich, lang, section="beating")))
    assert transfer not in visible_text("".join(rules_text(plain, lang, section="beating")))
    # The series is told under the ending only when there is one.
    series_title = visible_text(tr.t("rules.series.title"))
    assert series_title in visible_text("".join(rules_text(rich, lang, section="ending")))
    assert series_title not in visible_text("".join(rules_text(plain, lang, section="ending")))
    # The options section names the pace of this table.
    fast = TablePace("fast", 30.0, 3.5)
    options = visible_text("".join(rules_text(plain, lang, section="options", pace=fast)))
    assert visible_text(tr.t("option.pace_fast")) in options


# --- a window counts from when its buttons landed -------------------------------------------


async def test_a_throw_in_window_shown_late_still_lasts_a_whole_window() -> None:
    """A busy bot may deliver the attacker's buttons late: the bot passes for them only
    once they had the whole window, counted from when the buttons landed."""
    from types import SimpleNamespace

    from bot.app.turn_gate import TurnGate
    from bot.domain.records import UserRecord

    game = pair_then_take(lobby())
    user = game.seats[game.engine_state().attacker].user_id
    assert user is not None
    assert must_act(game.engine_state()).kind == "throw_in"
    assert game.turn_deadline == 2.0 + LONG

    async def store_of_the_player() -> Storage:
        """A store of their own (each case below starts from nothing shown)."""
        store = Storage(fakeredis.aioredis.FakeRedis(), finished_ttl=60, idle_ttl=60)
        await store.save_user(user, UserRecord(dm_open=True))
        return store

    storage = await store_of_the_player()
    refreshed: list[int] = []

    async def follows_in_app(chat_id: int, user_id: int) -> bool:
        return False  # in the chat, not in the Mini App

    games = SimpleNamespace(
        storage=storage,
        timing=TIMING,
        box=SimpleNamespace(refresh_hand=lambda chat, uid: refreshed.append(uid)),
        follows_in_app=follows_in_app,
    )
    gate = TurnGate(games)  # type: ignore[arg-type]
    deadline = game.turn_deadline
    step = game.engine_state().step
    # Not on screen at the deadline: the hand is sent again and looked at again before
    # a hand landing right now could lose any of its window (but not every second).
    again = await gate.postpone_until(game, deadline)
    assert again is not None and deadline + gate.poll < again < deadline + LONG
    assert refreshed == [user]
    # Still owed (a worker is on its way with it): not asked for again, still waited for.
    owing = await store_of_the_player()
    await owing.update_table(
        game.place, lambda _: Write(game, None, output=Owed([hand_role(user)], [], []))
    )
    games.storage = owing
    assert await gate.postpone_until(game, deadline) == again
    assert refreshed == [user]
    games.storage = storage
    # Landed just after that look: at the next look its whole window is still ahead.
    landed = await store_of_the_player()
    await landed.mark_hand_shown(Place(CHAT), user, GID, step, deadline + 0.1)
    games.storage = landed
    assert await gate.postpone_until(game, again) == deadline + 0.1 + LONG
    games.storage = storage
    # On screen one second before the deadline: the window runs from then.
    await storage.mark_hand_shown(Place(CHAT), user, GID, step, deadline - 1.0)
    late = deadline - 1.0 + LONG
    assert await gate.postpone_until(game, deadline) == late
    assert await gate.postpone_until(game, late) is None  # then the bot passes for them
    # On screen as the window opened: the deadline stands.
    on_time = await store_of_the_player()
    await on_time.mark_hand_shown(Place(CHAT), user, GID, step, 2.0)
    games.storage = on_time
    assert await gate.postpone_until(game, deadline) is None
    # In the Mini App the turn shows live there: the collapsed hand is never waited for.
    in_app = await store_of_the_player()
    games.storage = in_app

    async def in_the_app(chat_id: int, user_id: int) -> bool:
        return True

    games.follows_in_app = in_the_app
    refreshed.clear()
    assert await gate.postpone_until(game, deadline) is None
    assert refreshed == []
