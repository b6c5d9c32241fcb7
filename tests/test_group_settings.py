"""/settings without Telegram: the settings table, its buttons' codes, the menu's screens
in every language, the stored record, and what the flow takes from the settings (a new
lobby's options, the turn timeout as the table's clock)."""

from __future__ import annotations

import json

import pytest

from bot import render
from bot.domain import callbacks, flow
from bot.domain.callbacks import SCREEN, CallbackError, SettingsButton
from bot.domain.flow import Moment, Person, Timing
from bot.domain.group_settings import GROUP_SETTINGS, SCREENS, SETTINGS_BY_NAME
from bot.domain.lobby_options import LOBBY_OPTIONS
from bot.domain.place import Place
from bot.domain.records import TURN_TIMEOUTS, ChatSettings, LobbyDefaults
from bot.render.labels import too_wide
from bot.render.lobby import CHOSEN
from bot.render.settings import settings_menu
from engine import Rules
from locales import SUPPORTED, translator

CHAT = -100900
ANN, BOB = Person(1, "Ann"), Person(2, "Bob")
TIMING = Timing(turn_timeout=60.0, ai_delay=0.0, notify_quiet=20.0)


def at(now: float) -> Moment:
    return Moment(now, TIMING)


def test_every_lobby_option_has_a_default_and_every_button_codes_back() -> None:
    assert {s.option.op for s in GROUP_SETTINGS if s.option is not None} == {
        o.op for o in LOBBY_OPTIONS
    }
    for setting in GROUP_SETTINGS:
        for index in (None, *range(len(setting.values))):
            data = callbacks.encode_settings(setting.name, index)
            assert len(data.encode()) <= callbacks.MAX_BYTES
            assert callbacks.decode(data) == SettingsButton(setting.name, index)
        with pytest.raises(ValueError):
            callbacks.encode_settings(setting.name, len(setting.values))
    for index in range(len(SCREENS)):
        data = callbacks.encode_settings(SCREEN, index)
        assert callbacks.decode(data) == SettingsButton(SCREEN, index)
    # Menus sent before the table: "S:r0" turned rating off, "S:r1" on; still so.
    rating = SETTINGS_BY_NAME["rating"]
    assert [rating.values[callbacks.decode(f"S:r{i}").value or 0] for i in (0, 1)] == [
        False,
        True,
    ]
    for forged in ("S:", "S:x1", "S:r2", "S:r10", "S:m", "S:m3", "S:o7", "S:d3", "S:ro"):
        with pytest.raises(CallbackError):
            callbacks.decode(forged)


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_screen_fits_and_marks_the_current_values(lang: str) -> None:
    tr = translator(lang)
    chosen = ChatSettings(
        defaults=LobbyDefaults(
            rules=Rules(deck_size=52, series_length=5), pace="relaxed", ai="hard"
        ),
        starts="admins",
        turn_timeout=120,
        tidy=False,
        rating=False,
    )
    for settings in (ChatSettings(), chosen):
        for screen in SCREENS:
            menu = settings_menu(settings, tr, 60.0, screen)
            assert menu.markup is not None
            rows = menu.markup.inline_keyboard
            assert too_wide(rows) == [], (lang, screen, rows)
            marked = [b.callback_data for row in rows for b in row if b.text.startswith(CHOSEN)]
            if screen == "home":
                assert marked == [] and sum(len(row) for row in rows) == len(SCREENS) - 1
                continue
            # One value marked per setting of the section: its current one.
            want = [
                callbacks.encode_settings(s.name, s.values.index(s.current(settings, 60.0)))
                for s in GROUP_SETTINGS
                if s.section == screen
            ]
            assert marked == want, (lang, screen)
    home = settings_menu(chosen, translator("en"), 60.0).text
    assert "Deck: 52" in home and "Series: 5" in home and "Pace: relaxed" in home
    assert "Computer: hard" in home
    assert "Who may start games: admins" in home and "Time for a move: 120 s" in home
    assert "Tidy-up: off" in home and "Rating: off" in home


def test_the_bots_own_timeout_is_marked_until_a_group_chooses() -> None:
    timeout = SETTINGS_BY_NAME["timeout"]
    assert timeout.values == TURN_TIMEOUTS
    assert timeout.current(ChatSettings(), 90.0) == 90
    assert timeout.current(ChatSettings(turn_timeout=30), 90.0) == 30
    assert timeout.set_to(ChatSettings(), 45).turn_timeout == 45


def test_settings_at_their_defaults_are_stored_as_before() -> None:
    """Code from before these settings refuses unknown fields: a group that keeps them
    all at their default is stored exactly as it was."""
    assert json.loads(ChatSettings(lang="de").to_json()) == {
        "schema": 1,
        "lang": "de",
        "how_to_shown": False,
    }
    chosen = SETTINGS_BY_NAME["deck"].set_to(ChatSettings(), 52)
    chosen = SETTINGS_BY_NAME["tidy"].set_to(chosen, False)
    raw = chosen.to_json()
    assert {"defaults", "tidy"} <= set(json.loads(raw)) and "starts" not in json.loads(raw)
    assert ChatSettings.model_validate_json(raw) == chosen
    assert chosen.defaults is not None and chosen.defaults.rules.deck_size == 52


def test_a_new_lobby_starts_from_the_defaults_else_the_last_games_options() -> None:
    defaults = LobbyDefaults(
        rules=Rules(deck_size=52, variant="perevodnoy"), pace="fast", ai="normal"
    )
    lobby, _ = flow.new_lobby(None, at(0.0), Place(CHAT), "Club", ANN, "gs0001", True, defaults)
    assert (lobby.rules, lobby.pace, lobby.ai_first) == (defaults.rules, "fast", "normal")
    shown = render.lobby_message(lobby, translator("en"), "bot", [])
    labels = [b.text for row in shown.markup.inline_keyboard for b in row]  # type: ignore[union-attr]
    assert [label for label in labels if "AI" in label][:3] == [
        "+ AI Normal",
        "+ AI Easy",
        "+ AI Hard",
    ]
    assert json.loads(lobby.to_json())["ai_first"] == "normal"
    assert "ai_first" not in json.loads(lobby.model_copy(update={"ai_first": "easy"}).to_json())
    # None chosen: the last game's options stay, as before.
    finished = lobby.model_copy(update={"phase": "finished"})
    again, _ = flow.new_lobby(finished, at(10.0), Place(CHAT), "Club", BOB, "gs0002")
    assert (again.rules, again.pace) == (defaults.rules, "fast")
    fresh, _ = flow.new_lobby(
        finished, at(10.0), Place(CHAT), "Club", BOB, "gs0003", True, LobbyDefaults()
    )
    assert (fresh.rules, fresh.pace) == (Rules(), "normal")


def test_the_groups_turn_timeout_is_the_tables_clock() -> None:
    lobby, _ = flow.new_lobby(None, at(0.0), Place(CHAT), "Club", ANN, "gs0004")
    lobby, _ = flow.join(lobby, at(1.0), "gs0004", BOB)
    game, _ = flow.start(lobby, at(2.0), "gs0004", ANN.user_id, [], None, 30.0)
    assert game.turn_timeout == 30.0
    assert flow.table_timing(game, TIMING).turn_timeout == 30.0
    assert game.turn_deadline == pytest.approx(2.0 + 30.0)
    # The pace scales the group's timeout as it scaled the bot's.
    relaxed = game.model_copy(update={"pace": "relaxed"})
    assert flow.table_timing(relaxed, TIMING).turn_timeout == 60.0
    # None: the bot's own.
    plain = game.model_copy(update={"turn_timeout": None})
    assert flow.table_timing(plain, TIMING).turn_timeout == 60.0
    assert "turn_timeout" not in json.loads(plain.to_json())
