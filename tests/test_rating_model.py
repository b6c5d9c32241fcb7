"""The skill rating model (bot.domain.rating) on hand-made results."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import date, datetime

import pytest

from ai import player
from bot.domain.rating import (
    COMPUTER_SKILL,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    DISPLAY_BASE,
    DISPLAY_PER_MU,
    ESTABLISHED_SIGMA,
    Computer,
    FinishedGame,
    Human,
    RatingRecord,
    RatingUpdate,
    Skill,
    display_rating,
    finish_groups,
    game_from_state,
    leaderboard,
    placings,
    rate_game,
    result_line,
    season_of,
    season_of_date,
)
from engine import Rules, State, apply, new_game, view, waiting_for


def humans(n: int) -> tuple[Human, ...]:
    return tuple(Human(100 + s) for s in range(n))


def mu_changes(game: FinishedGame, records: dict[int, RatingRecord] | None = None) -> list[float]:
    """Each seat's change of mu (humans only, in seat order)."""
    records = records or {}
    updates = rate_game(game, records)
    assert updates is not None
    return [
        updates[p.user_id].new.mu - updates[p.user_id].old.mu
        for p in game.seats
        if isinstance(p, Human)
    ]


# --- ranks from the finishing order ---------------------------------------------------


def test_finishing_order_ranks_first_out_first_and_the_durak_last() -> None:
    # Seat 2 out first, then 0, then 3; seat 1 is the durak.
    game = FinishedGame(humans(4), ((2,), (0,), (3,)), durak=1)
    assert placings(game) == (1, 3, 0, 2)
    change = mu_changes(game)
    # Equal newcomers: the one out first gains most, then in finishing order, the durak loses.
    assert change[2] > change[0] > change[3] > change[1]
    assert change[2] > 0 > change[1]
    # Plackett-Luce moves mu zero-sum when every sigma is equal (each rank's win
    # probabilities add up to 1): what the durak and the late ones lose, the early ones gain.
    assert sum(change) == pytest.approx(0.0, abs=1e-9)


def test_every_update_shrinks_the_uncertainty_and_counts_the_game() -> None:
    game = FinishedGame(humans(3), ((0,), (2,)), durak=1)
    updates = rate_game(game, {})
    assert updates is not None
    for update in updates.values():
        assert update.new.sigma < update.old.sigma == DEFAULT_SIGMA
        assert update.new.games == 1
    assert [updates[100 + s].new.wins for s in range(3)] == [1, 0, 1]


def test_players_out_on_the_same_move_tie() -> None:
    game = FinishedGame(humans(3), ((0, 2),), durak=1)
    assert placings(game) == (0, 1, 0)
    change = mu_changes(game)
    assert change[0] == pytest.approx(change[2])
    assert change[0] > 0 > change[1]


def test_a_draw_ranks_everyone_equal() -> None:
    # Seat 1 went out early, then 0 and 2 together left nobody holding cards.
    game = FinishedGame(humans(3), ((1,), (0, 2)), durak=None)
    assert placings(game) == (0, 0, 0)
    assert mu_changes(game) == pytest.approx([0.0, 0.0, 0.0])
    # A draw is less than the stronger player was expected to get: they lose a little.
    strong = RatingRecord(mu=30.0, sigma=2.0, games=50)
    weak = RatingRecord(mu=20.0, sigma=2.0, games=50)
    two = FinishedGame(humans(2), (), durak=None)
    change = mu_changes(two, {100: strong, 101: weak})
    assert change[0] < 0 < change[1]
    updates = rate_game(two, {100: strong, 101: weak})
    assert updates is not None and all(u.new.wins == u.old.wins for u in updates.values())


def test_the_favourite_beating_the_underdog_gains_less_than_the_upset() -> None:
    strong = RatingRecord(mu=30.0, sigma=3.0, games=40)
    weak = RatingRecord(mu=20.0, sigma=3.0, games=40)
    records = {100: strong, 101: weak}
    expected = mu_changes(FinishedGame(humans(2), ((0,),), durak=1), records)
    upset = mu_changes(FinishedGame(humans(2), ((1,),), durak=0), records)
    assert 0 < expected[0] < upset[1]


def test_a_game_ended_early_ranks_those_still_holding_cards_between() -> None:
    # Seat 3 went out; 0 and 2 still held cards when the game was ended; 1 is the durak.
    game = FinishedGame(humans(4), ((3,),), durak=1)
    assert placings(game) == (1, 2, 1, 0)


# --- partners --------------------------------------------------------------------------


def test_partners_rank_teams_the_durak_team_last() -> None:
    # Seat 1 of team 1 went out first, but seat 3, its partner, is the durak.
    game = FinishedGame(humans(4), ((1,), (0,), (2,)), durak=3, teams=(0, 1, 0, 1))
    assert placings(game) == (0, 1, 0, 1)
    change = mu_changes(game)
    assert change[0] == pytest.approx(change[2]) and change[0] > 0
    assert change[1] == pytest.approx(change[3]) and change[1] < 0
    updates = rate_game(game, {})
    assert updates is not None
    assert [updates[100 + s].new.wins for s in range(4)] == [1, 0, 1, 0]


def test_partners_of_three_and_a_draw() -> None:
    teams = (0, 1, 0, 1, 0, 1)
    won = FinishedGame(humans(6), ((0,), (2,), (4,)), durak=5, teams=teams)
    assert placings(won) == (0, 1, 0, 1, 0, 1)
    drawn = FinishedGame(humans(6), ((0, 1),), durak=None, teams=teams)
    assert placings(drawn) == (0,) * 6


def test_a_stronger_partner_shares_the_team_result() -> None:
    """Teams are rated as teams: both winners gain, both losers lose, and a partner with
    the less certain rating moves more (openskill shares by sigma squared)."""
    records = {
        100: RatingRecord(mu=25.0, sigma=2.0, games=90),
        102: RatingRecord(mu=25.0, sigma=6.0, games=3),
    }
    game = FinishedGame(humans(4), ((0,), (2,)), durak=1, teams=(0, 1, 0, 1))
    change = mu_changes(game, records)
    assert 0 < change[0] < change[2]


# --- leavers ---------------------------------------------------------------------------


def test_a_leaver_ranks_below_the_durak() -> None:
    game = FinishedGame(humans(3), ((2,),), durak=1, left=(0,))
    assert placings(game) == (2, 1, 0)
    change = mu_changes(game)
    assert change[0] < 0 < change[2]
    assert change[0] < change[1] < change[2]
    # Plackett-Luce credits the durak for finishing above the leaver: the durak here does
    # better than the durak of the same game without a leaver (last of three).
    without = mu_changes(FinishedGame(humans(3), ((2,), (0,)), durak=1))
    assert change[1] > without[1]
    updates = rate_game(game, {})
    assert updates is not None and updates[100].new.wins == 0


def test_a_leaver_who_is_the_durak_or_went_out_still_ranks_last() -> None:
    # The bot names the leaver the durak; a computer may have played their seat out.
    as_durak = FinishedGame(humans(3), ((1,), (2,)), durak=0, left=(0,))
    went_out = FinishedGame(humans(3), ((0,), (2,)), durak=1, left=(0,))
    assert placings(as_durak) == (2, 0, 1)
    assert placings(went_out) == (2, 1, 0)


def test_leavers_tie_last_even_in_a_draw() -> None:
    game = FinishedGame(humans(4), ((1, 2),), durak=None, left=(3, 0))
    assert placings(game) == (1, 0, 0, 1)


def test_a_partners_leaver_sinks_their_team_and_spares_the_partner() -> None:
    # Seat 0 left; team 1 has the durak on the board, but leaving loses the game.
    records = {102: RatingRecord(mu=27.0, sigma=3.0, games=20, wins=12)}
    game = FinishedGame(humans(4), ((2,), (0,)), durak=1, left=(0,), teams=(0, 1, 0, 1))
    assert placings(game) == (1, 0, 1, 0)
    updates = rate_game(game, records)
    assert updates is not None
    assert updates[100].new.mu < DEFAULT_MU
    assert updates[101].new.mu > DEFAULT_MU and updates[103].new.mu > DEFAULT_MU
    partner = updates[102]
    assert (partner.new.mu, partner.new.sigma) == (27.0, 3.0)
    assert (partner.new.games, partner.new.wins) == (21, 12)


def test_a_leaver_never_gains() -> None:
    # Both teams have a leaver, so they tie on that; team 1 also has the durak.
    game = FinishedGame(humans(4), ((0,),), durak=3, left=(0, 1), teams=(0, 1, 0, 1))
    updates = rate_game(game, {})
    assert updates is not None
    assert placings(game) == (0, 1, 0, 1)
    assert updates[100].new.mu <= DEFAULT_MU  # left, though on the winning side


# --- computers --------------------------------------------------------------------------


def test_the_computer_levels_are_ordered_and_normal_is_the_anchor() -> None:
    easy, normal, hard = (COMPUTER_SKILL[level] for level in ("easy", "normal", "hard"))
    assert easy.mu < normal.mu < hard.mu
    assert normal.mu == DEFAULT_MU
    assert all(0 < s.sigma < DEFAULT_SIGMA for s in (easy, normal, hard))


def test_computer_seats_are_not_updated_and_not_returned() -> None:
    before = dict(COMPUTER_SKILL)
    seats = (Human(7), Computer("hard"), Computer("easy"))
    updates = rate_game(FinishedGame(seats, ((0,), (2,)), durak=1), {})
    assert updates is not None and set(updates) == {7}
    assert dict(COMPUTER_SKILL) == before


def test_beating_hard_is_worth_more_than_beating_easy() -> None:
    me = {7: RatingRecord(mu=25.0, sigma=4.0, games=10)}

    def change(level: str, i_win: bool) -> float:
        seats = (Human(7), Computer(level))  # type: ignore[arg-type]
        game = FinishedGame(seats, ((0,),) if i_win else ((1,),), durak=1 if i_win else 0)
        return mu_changes(game, me)[0]

    assert change("hard", True) > change("normal", True) > change("easy", True) > 0
    # And losing to Easy costs more than losing to Hard.
    assert change("easy", False) < change("normal", False) < change("hard", False) < 0


def test_a_game_without_humans_is_not_rated() -> None:
    seats = (Computer("easy"), Computer("normal"), Computer("hard"))
    assert rate_game(FinishedGame(seats, ((2,), (1,)), durak=0), {}) is None


# --- records, display, result line ------------------------------------------------------


def test_record_json_round_trip() -> None:
    record = RatingRecord(mu=27.123456789, sigma=3.3, games=42, wins=30)
    text = json.dumps(record.to_dict())
    assert RatingRecord.from_dict(json.loads(text)) == record
    assert json.loads(text)["schema"] == 1


@pytest.mark.parametrize(
    "patch",
    [
        {"schema": 2},
        {"schema": None},
        {"mu": "25"},
        {"mu": float("nan")},
        {"sigma": 0.0},
        {"games": True},
        {"games": -1},
        {"wins": 11},
    ],
)
def test_a_bad_record_is_refused(patch: dict[str, object]) -> None:
    data = {**RatingRecord(games=10, wins=3).to_dict(), **patch}
    with pytest.raises(ValueError):
        RatingRecord.from_dict(data)


def test_display_scale() -> None:
    established_average = Skill(DEFAULT_MU, ESTABLISHED_SIGMA)
    assert display_rating(established_average) == DISPLAY_BASE
    # One unit of mu is DISPLAY_PER_MU points; one of sigma three times as many, downwards.
    assert display_rating(replace(established_average, mu=DEFAULT_MU + 10)) == round(
        DISPLAY_BASE + 10 * DISPLAY_PER_MU
    )
    assert display_rating(replace(established_average, sigma=ESTABLISHED_SIGMA + 1)) == round(
        DISPLAY_BASE - 3 * DISPLAY_PER_MU
    )
    newcomer = RatingRecord()
    assert newcomer.display < DISPLAY_BASE  # an unsure rating shows low and climbs


def test_result_line_numbers_add_up() -> None:
    game = FinishedGame(humans(2), ((0,),), durak=1)
    updates = rate_game(game, {})
    assert updates is not None
    win, loss = result_line(updates[100]), result_line(updates[101])
    assert win.delta == win.new - win.old and win.delta > 0
    assert loss.new - loss.old == loss.delta
    assert win.old == loss.old == RatingRecord().display
    assert win.games == 1 and win.provisional
    settled = RatingUpdate(RatingRecord(games=9), RatingRecord(games=10))
    assert not result_line(settled).provisional
    assert result_line(settled, min_games=11).provisional


def test_a_newcomer_who_keeps_losing_to_easy_ends_below_a_winner() -> None:
    """Many games make the ratings sure: steady winners end high, steady losers low."""
    winner, loser = RatingRecord(), RatingRecord()
    for _ in range(60):
        up = rate_game(FinishedGame((Human(1), Computer("normal")), ((0,),), durak=1), {1: winner})
        down = rate_game(FinishedGame((Human(2), Computer("easy")), ((1,),), durak=0), {2: loser})
        assert up is not None and down is not None
        winner, loser = up[1].new, down[2].new
    assert winner.display > DISPLAY_BASE > loser.display
    # Expected results teach little, so sigma falls slowly, but it falls.
    assert winner.sigma < 0.6 * DEFAULT_SIGMA and loser.sigma < 0.6 * DEFAULT_SIGMA


# --- seasons ---------------------------------------------------------------------------


def test_season_ids() -> None:
    assert season_of(2026, 12) == "2026-12"
    assert season_of(2027, 1) == "2027-01"
    assert season_of(2026, 2, "quarter") == "2026-Q1"
    assert season_of(2026, 3, "quarter") == "2026-Q1"
    assert season_of(2026, 4, "quarter") == "2026-Q2"
    assert season_of(2026, 12, "quarter") == "2026-Q4"
    assert season_of(2026, 6, "half") == "2026-H1"
    assert season_of(2026, 7, "half") == "2026-H2"
    assert season_of(2026, 7, "year") == "2026"
    assert season_of_date(date(2026, 12, 31)) == "2026-12"
    assert season_of_date(datetime(2027, 1, 1, 0, 0, 1), "quarter") == "2027-Q1"


def test_monthly_season_ids_sort_in_time() -> None:
    months = [(y, m) for y in (2026, 2027) for m in range(1, 13)]
    ids = [season_of(y, m) for y, m in months]
    assert ids == sorted(ids) and len(set(ids)) == 24


@pytest.mark.parametrize("month", [0, 13])
def test_season_of_a_month_that_does_not_exist(month: int) -> None:
    with pytest.raises(ValueError):
        season_of(2026, month)


# --- leaderboard -----------------------------------------------------------------------


def test_leaderboard_lists_only_players_with_enough_games() -> None:
    records = {
        1: RatingRecord(mu=40.0, sigma=2.0, games=4),  # best rating, too few games
        2: RatingRecord(mu=30.0, sigma=2.0, games=5),
        3: RatingRecord(mu=20.0, sigma=2.0, games=50),
    }
    board = leaderboard(records)
    assert [e.player for e in board] == [2, 3]
    assert [e.place for e in board] == [1, 2]
    assert board[0].rating == records[2].display
    assert [e.player for e in leaderboard(records, min_games=1)] == [1, 2, 3]
    assert [e.player for e in leaderboard(records, min_games=1, limit=2)] == [1, 2]


def test_leaderboard_ties_share_a_place_in_a_stable_order() -> None:
    same = RatingRecord(mu=28.0, sigma=2.0, games=10)
    records = [
        (5, same),
        (3, same),
        (9, replace(same, games=30)),  # same rating, more games: listed first
        (4, RatingRecord(mu=35.0, sigma=2.0, games=10)),
        (8, RatingRecord(mu=20.0, sigma=2.0, games=10)),
    ]
    board = leaderboard(records)
    assert [e.player for e in board] == [4, 9, 3, 5, 8]
    assert [e.place for e in board] == [1, 2, 2, 2, 5]
    for seed in range(5):
        shuffled = records[:]
        random.Random(seed).shuffle(shuffled)
        assert leaderboard(dict(shuffled)) == board


# --- from an engine game ---------------------------------------------------------------


def play_out(num_players: int, seed: int, partners: bool = False) -> State:
    rules = Rules.preset("classic")
    if partners:
        rules = Rules.parse({**rules.model_dump(), "partners": True})
    players = [player("easy", seed=seed * 10 + s) for s in range(num_players)]
    state = new_game(rules, num_players, seed=seed)
    while not state.over:
        p = waiting_for(state)[0]
        state = apply(state, p, players[p].choose(view(state, p)))
    return state


@pytest.mark.parametrize("seed", range(6))
def test_an_engine_game_gives_its_finishing_order(seed: int) -> None:
    state = play_out(4, seed)
    groups = finish_groups(state)
    assert tuple(s for g in groups for s in g) == state.out
    game = game_from_state(state, humans(4))
    assert game.teams is None and game.durak == state.durak
    ranks = placings(game)
    if state.durak is not None:
        assert ranks[state.durak] == max(ranks)
        assert all(ranks[s] == 0 for s in groups[0])


def test_an_engine_partners_game_rates_teams() -> None:
    state = play_out(4, 3, partners=True)
    game = game_from_state(state, humans(4))
    assert game.teams == (0, 1, 0, 1)
    ranks = placings(game)
    assert ranks[0] == ranks[2] and ranks[1] == ranks[3]


# --- malformed games -------------------------------------------------------------------


@pytest.mark.parametrize(
    "game",
    [
        FinishedGame((Human(1),), (), durak=0),  # one seat
        FinishedGame((Human(1), Human(1)), ((0,),), durak=1),  # one human, two seats
        FinishedGame(humans(2), ((0,), (1,)), durak=1),  # the durak ran out of cards
        FinishedGame(humans(2), ((0, 0),), durak=1),  # out twice
        FinishedGame(humans(2), ((0,),), durak=2),  # no such seat
        FinishedGame(humans(3), ((0,),), durak=1, teams=(0, 0, 0)),  # one team
    ],
)
def test_a_malformed_game_is_refused(game: FinishedGame) -> None:
    with pytest.raises(ValueError):
        rate_game(game, {})
