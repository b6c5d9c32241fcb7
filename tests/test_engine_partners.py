"""Partners (German seed, "Mit Partnern"): 2 against 2 or 3 against 3, team = seat % 2.

The defender defends alone; partners never attack or throw in against each other; once
one side has no cards left, every member of the side still holding cards is a durak.
"""

from __future__ import annotations

import pytest
from deck_builder import legal, play, position

from engine import (
    GameResult,
    MustAct,
    Rules,
    RulesError,
    Series,
    must_act,
    new_game,
    public_view,
    result,
    team_of,
    view,
    waiting_for,
)
from engine.events import GameOver

PARTNERS = Rules(partners=True)


@pytest.mark.parametrize("players", [2, 3, 5])
def test_partners_need_four_or_six_players(players: int) -> None:
    with pytest.raises(RulesError, match="4 or 6 players"):
        new_game(PARTNERS, players, seed=1)
    with pytest.raises(RulesError, match="4 or 6 players"):
        Series.start(PARTNERS, players)


def test_teams_are_seat_parity_partners_opposite_in_four_alternating_in_six() -> None:
    assert [team_of(PARTNERS, s) for s in range(6)] == [0, 1, 0, 1, 0, 1]
    assert team_of(Rules(), 3) is None
    v = view(new_game(PARTNERS, 4, seed=3), 0)
    assert [v.team(s) for s in range(4)] == [0, 1, 0, 1]


def test_2v2_the_defenders_partner_never_throws_in_and_the_defender_defends_alone() -> None:
    state = position(["7♠ 8♠", "9♠ 10♠ J♠ Q♠", "7♦ 9♦", "7♣ 8♣"], "A♥", attacker=0, rules=PARTNERS)
    state = play(state, "0: attack 7♠")
    assert waiting_for(state) == (1, 2)  # 3 holds 7♣ but is the defender's partner
    assert legal(state, 3) == set()
    assert must_act(state) == MustAct("defend", 1, (0, 2))
    state = play(state, "2: attack 7♦", "1: beat 7♠ 9♠")
    assert legal(state, 3) == set()  # nor may the partner beat for them
    assert not any(a.startswith("beat") for a in legal(state, 2))


def test_2v2_one_side_out_of_cards_the_other_side_loses_together() -> None:
    state = position(["7♠", "9♠ 10♦ J♠", "7♦", "K♣ Q♣"], "A♥", attacker=0, rules=PARTNERS)
    state = play(state, "0: attack 7♠", "2: attack 7♦", "1: beat 7♠ 9♠", "1: beat 7♦ 10♦")
    assert state.over
    assert result(state) == GameResult(1, (0, 2, 1, 3), losing_team=1)
    assert result(state).losers == (1, 3)  # type: ignore[union-attr]
    assert GameOver(1, (0, 2, 1, 3), 1) in state.events
    table = public_view(state)
    assert table.losing_team == 1 and table.losers == (1, 3)
    series = Series.start(PARTNERS, 4).record(result(state))  # type: ignore[arg-type]
    assert series.durak_counts == (0, 1, 0, 1)
    assert series.first_out_counts == (1, 0, 0, 0)
    assert series.winners() == (0, 2)


def test_a_team_member_who_ran_out_early_still_loses_with_the_team() -> None:
    # Seat 3 ran out earlier; now team 0 runs out too: 1 and 3 both lose.
    state = position(["7♠", "9♠ 10♦", "", ""], "A♥", attacker=0, out=(2, 3), rules=PARTNERS)
    state = play(state, "0: attack 7♠", "1: beat 7♠ 9♠")
    final = result(state)
    assert final is not None and final.losing_team == 1 and final.losers == (1, 3)
    assert final.order == (2, 3, 0, 1)


def test_both_sides_out_in_the_same_bout_is_a_draw() -> None:
    state = position(["7♠", "9♠", "", ""], "A♥", attacker=0, out=(2, 3), rules=PARTNERS)
    state = play(state, "0: attack 7♠", "1: beat 7♠ 9♠")
    final = result(state)
    assert final is not None and final.draw and final.losing_team is None
    assert final.losers == ()
    series = Series.start(PARTNERS, 4).record(final)
    assert series.durak_counts == (0, 0, 0, 0) and series.first_out_counts == (0, 0, 0, 0)
    assert series.draws == 1


def test_the_next_defender_skips_the_attackers_partner_when_a_seat_is_out() -> None:
    state = position(
        ["9♠ 8♦", "", "K♦ Q♦", "7♠ 10♣"], "A♥", attacker=3, defender=0, out=(1,), rules=PARTNERS
    )
    state = play(state, "3: attack 7♠", "0: beat 7♠ 9♠")
    # 0 defended and leads; 2 sits next but is 0's partner, so 3 defends.
    assert (state.attacker, state.defender) == (0, 3)


def test_2v2_transfer_the_old_attackers_partner_defends_and_the_old_attacker_stops() -> None:
    rules = Rules(partners=True, variant="perevodnoy")
    state = position(
        ["7♠ 7♣ K♦", "7♦ 9♠ J♠", "8♦ 9♦ 10♦", "7♥ Q♣ K♣"], "A♥", attacker=0, rules=rules
    )
    state = play(state, "0: attack 7♠", "1: transfer 7♦")
    assert (state.attacker, state.defender) == (1, 2)  # 2 is 0's partner
    assert "attack 7♣" not in legal(state, 0)  # no attacking one's partner
    assert "attack 7♥" in legal(state, 3)
    assert must_act(state) == MustAct("defend", 2, (1, 3))


def test_a_transfer_skips_the_defenders_partner_when_a_seat_is_out() -> None:
    rules = Rules(partners=True, variant="perevodnoy")
    state = position(
        ["7♠ 8♣ K♦ A♠", "7♦ 9♠ J♠", "", "8♥ Q♣ K♣"], "A♥", attacker=0, out=(2,), rules=rules
    )
    state = play(state, "0: attack 7♠", "1: transfer 7♦")
    assert (state.attacker, state.defender) == (1, 0)  # not 3, 1's partner
    assert must_act(state) == MustAct("defend", 0, (1, 3))


def test_3v3_only_the_other_side_throws_in_and_neighbours_narrow_it() -> None:
    hands = ["7♠ 8♠", "9♠ 10♠ J♠ Q♠", "7♦ 9♦", "7♣ 8♣", "7♥ 8♥", "9♣ 10♣"]
    state = position(hands, "A♦", attacker=0, rules=Rules(partners=True))
    state = play(state, "0: attack 7♠")
    assert waiting_for(state) == (1, 2, 4)  # 3 and 5 hold sevens but are 1's partners
    assert must_act(state).may_add == (0, 2, 4)
    neighbours = Rules(partners=True, throw_in="neighbours")
    state = play(position(hands, "A♦", attacker=0, rules=neighbours), "0: attack 7♠")
    assert must_act(state).may_add == (0, 2)
    assert legal(state, 4) == set()
