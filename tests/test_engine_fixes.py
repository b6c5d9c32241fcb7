"""The rule gaps of issue 10: finishing order, draws, the first dealer, the first-bout
limit by player count."""

from __future__ import annotations

import json

import pytest
from deck_builder import build_deck, play, position

from engine import (
    FirstBoutLimit,
    GameResult,
    Rules,
    Series,
    State,
    dealer_by_lot,
    new_game,
    result,
)
from engine.events import PlayerOut


def test_players_out_in_one_bout_finish_in_the_order_they_ran_out() -> None:
    # The draw order would be 0 (the leader) then 2; but 2 played their last card first.
    state = position(["7♠ 9♣", "9♠ 10♦ 10♣ Q♠ K♠", "7♦"], "A♥", attacker=0)
    state = play(
        state,
        "0: attack 7♠",
        "2: attack 7♦",  # 2 has no cards left
        "1: beat 7♠ 9♠",
        "0: attack 9♣",  # now 0 has none either
        "1: beat 7♦ 10♦",
        "1: beat 9♣ 10♣",
    )
    assert state.out == (2, 0)
    assert [e.player for e in state.events if isinstance(e, PlayerOut)] == [2, 0]
    assert result(state) == GameResult(1, (2, 0, 1))


def test_a_drawn_game_credits_nobody() -> None:
    state = position(["7♠", "9♠"], "A♥", attacker=0)
    state = play(state, "0: attack 7♠", "1: beat 7♠ 9♠")
    final = result(state)
    assert final == GameResult(None, (0, 1)) and final.draw and final.losers == ()
    series = Series.start(Rules(series_length=3), 2).record(final)
    assert series.first_out_counts == (0, 0) and series.durak_counts == (0, 0)
    assert series.draws == 1 and series.winners() == (0, 1)


def test_series_fewest_duraks_win_and_ties_share_the_win() -> None:
    series = Series.start(Rules(series_length=3), 3)
    series = series.record(GameResult(2, (1, 0, 2)))
    series = series.record(GameResult(0, (2, 1, 0)))
    assert series.winners() == (1,)
    assert series.standings() == [1, 0, 2] and [series.place(p) for p in range(3)] == [2, 1, 2]
    series = series.record(GameResult(1, (0, 2, 1)))
    assert series.finished and series.winners() == (0, 1, 2)


def test_after_a_draw_the_lowest_trump_starts_again() -> None:
    series = Series.start(Rules(series_length=3), 3)
    series = series.record(GameResult(None, (0, 1, 2)))
    deck = build_deck(
        ["7♠ 8♠ 9♠ 10♠ J♠ Q♠", "K♠ A♠ 6♥ 7♥ 8♥ 9♥", "8♦ 9♦ 10♦ 7♦ Q♥ K♥"], "A♦", dealer=0
    )
    assert series.next_game(deck=deck).attacker == 2  # holds 7♦, the lowest trump
    assert new_game(Rules(), 3, deck=deck, first_game=False).attacker == 1


def test_the_first_dealer_is_drawn_by_lot_reproducibly() -> None:
    dealers = {new_game(Rules(), 4, seed=s, dealer=None).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    for seed in range(10):
        state = new_game(Rules(), 4, seed=seed, dealer=None)
        assert state.dealer == dealer_by_lot(4, seed)
        assert state == new_game(Rules(), 4, seed=seed, dealer=None)
    assert new_game(Rules(), 4, seed=7).dealer == 0  # the default stays seat 0


@pytest.mark.parametrize(
    ("mode", "players", "cap"),
    [
        ("always", 2, 5),
        ("always", 4, 5),
        ("from_four_players", 2, 6),
        ("from_four_players", 3, 6),
        ("from_four_players", 4, 5),
        ("from_four_players", 6, 5),
        ("off", 4, 6),
        (True, 3, 5),
        (False, 3, 6),
    ],
)
def test_first_bout_limit_modes(mode: str | bool, players: int, cap: int) -> None:
    rules = Rules(first_bout_limit=mode, deck_size=52)  # type: ignore[arg-type]
    assert rules.first_bout_cap(players) == cap
    state = new_game(rules, players, seed=1)
    assert state.limit == cap  # every defender holds 6 at the start


def test_first_bout_limit_reads_old_booleans_and_round_trips_as_text() -> None:
    assert Rules(first_bout_limit=True).first_bout_limit is FirstBoutLimit.ALWAYS  # type: ignore[arg-type]
    assert Rules.parse({"first_bout_limit": False}).first_bout_limit is FirstBoutLimit.OFF
    rules = Rules(first_bout_limit="from_four_players")  # type: ignore[arg-type]
    assert json.loads(rules.model_dump_json())["first_bout_limit"] == "from_four_players"
    assert Rules.parse(rules.model_dump_json()) == rules
    assert bool(FirstBoutLimit.OFF) is False and bool(FirstBoutLimit.ALWAYS) is True
    # A game stored when the option was a bool still loads.
    data = new_game(Rules(), 2, seed=1).to_dict()
    data["rules"]["first_bout_limit"] = False
    assert State.from_dict(data).rules.first_bout_limit is FirstBoutLimit.OFF
