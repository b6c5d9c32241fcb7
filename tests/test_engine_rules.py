"""Scenario tests: one or more per numbered rule of the engine issue, move by move.

Seats are 0..n-1 clockwise; the seed documents' "player 1" is seat 0.
"""

from __future__ import annotations

import itertools

import pytest
from deck_builder import build_deck, cards, game, legal, play, position

from engine import (
    Card,
    GameResult,
    IllegalActionError,
    Rules,
    RulesError,
    Series,
    legal_actions,
    new_game,
    result,
    view,
    waiting_for,
)
from engine.cards import beats, deck_cards
from engine.events import Discarded, Drew, GameOver, PickedUp, PlayerOut, TrumpShown

C = Card.parse


# --- 1. Deck ---------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "low"), [(24, 9), (36, 6), (52, 2)])
def test_deck_sizes_and_lowest_rank(size: int, low: int) -> None:
    deck = deck_cards(size)
    assert len(deck) == size
    assert min(c.rank for c in deck) == low
    state = new_game(Rules(deck_size=size), 2, seed=1)
    assert [state.hand_size(p) for p in (0, 1)] == [6, 6]
    assert len(state.stock) == size - 12


def test_rank_order_ace_high_ten_between_nine_and_jack() -> None:
    order = ["6♠", "7♠", "8♠", "9♠", "10♠", "J♠", "Q♠", "K♠", "A♠"]
    for lower, higher in itertools.pairwise(order):
        assert beats(C(higher), C(lower), trump=1)
        assert not beats(C(lower), C(higher), trump=1)


# --- 2. Deal -----------------------------------------------------------------------------


def test_deal_starts_left_of_dealer_one_card_at_a_time_and_trump_is_drawn_last() -> None:
    deck = list(deck_cards(36))
    state = new_game(Rules(), 3, deck=deck, dealer=1)
    # deck[0] goes to seat 2 (the dealer's left), deck[1] to seat 0, deck[2] to seat 1 ...
    assert set(state.hand(2)) == {deck[i] for i in range(0, 18, 3)}
    assert set(state.hand(0)) == {deck[i] for i in range(1, 18, 3)}
    assert set(state.hand(1)) == {deck[i] for i in range(2, 18, 3)}
    assert state.trump_card == deck[18]
    assert state.trump == deck[18].suit
    assert state.stock == (*deck[19:], deck[18])  # the face-up card is drawn last


def test_whole_deck_deal_has_no_stock_and_the_dealer_keeps_the_shown_card() -> None:
    deck = list(deck_cards(36))
    state = new_game(Rules(), 6, deck=deck, dealer=4)
    assert state.stock == ()
    last = deck[35]
    assert state.trump_card == last and state.trump == last.suit
    assert last in state.hand(4)
    assert TrumpShown(4, last) in state.events
    assert last in view(state, 0).known_cards[4]  # everyone saw it
    assert not any(a.kind == "swap" for p in range(6) for a in legal_actions(state, p))


def test_24_cards_four_players_use_the_whole_deck() -> None:
    state = new_game(Rules(deck_size=24), 4, seed=3)
    assert state.stock == () and all(state.hand_size(p) == 6 for p in range(4))


# --- 3. First attacker -------------------------------------------------------------------


def test_lowest_trump_attacks_first_and_is_shown() -> None:
    state = game(
        ["7♠ 8♠ 9♠ 10♠ J♠ Q♠", "K♠ A♠ 6♥ 7♥ 8♥ 9♥", "8♦ 9♦ 10♦ 7♦ Q♥ K♥"],
        trump_card="A♦",
    )
    assert state.attacker == 2 and state.defender == 0
    assert TrumpShown(2, C("7♦")) in state.events
    assert view(state, 1).known_cards[2] == (C("7♦"),)
    assert waiting_for(state) == (2,)
    assert legal(state, 0) == set() and legal(state, 1) == set()


def test_no_trump_in_any_hand_means_the_dealers_left_neighbour_attacks() -> None:
    state = game(
        ["6♠ 7♠ 8♠ 9♠ 10♠ J♠", "Q♠ K♠ A♠ 6♥ 7♥ 8♥", "9♥ 10♥ J♥ Q♥ K♥ A♥"],
        trump_card="A♦",
        dealer=1,
    )
    assert state.attacker == 2 and state.defender == 0


def test_later_games_the_dealers_left_neighbour_attacks() -> None:
    state = game(
        ["7♠ 8♠ 9♠ 10♠ J♠ Q♠", "K♠ A♠ 6♥ 7♥ 8♥ 9♥", "8♦ 9♦ 10♦ 7♦ Q♥ K♥"],
        trump_card="A♦",
        dealer=0,
        first_game=False,
    )
    assert state.attacker == 1 and state.defender == 2
    assert not any(isinstance(e, TrumpShown) for e in state.events)


# The Spanish seed's example: players 1-4 are seats 0-3, spades trump (9♠ turned).
SPANISH_EXAMPLE_HANDS = [
    "10♥ 8♠ Q♣ 9♦ J♦ K♦",
    "10♦ 6♥ 9♥ J♥ K♥ A♥",
    "8♣ 6♣ 9♣ J♣ K♣ A♣",
    "6♠ 7♥ 6♦ A♦ J♠ K♠",
]


def test_spanish_start_example_lowest_trump_six_attacks_left_neighbour() -> None:
    """9♠ is turned; player 4 holds 6♠, attacks player 1 (seat 0) at their left."""
    state = game(
        SPANISH_EXAMPLE_HANDS,
        trump_card="9♠",
    )
    assert (state.attacker, state.defender) == (3, 0)


# --- 4/5. Defender and beating -----------------------------------------------------------


def test_beating_same_suit_higher_or_any_trump_and_trumps_only_by_higher_trumps() -> None:
    # German seed: hearts trump; 9♠ falls to 10♠ ... A♠ or any heart; 9♥ only to higher hearts.
    state = game(
        ["9♠ 9♥ 6♦ 7♦ 8♦ 10♦", "10♠ 8♠ 6♥ 10♥ 8♥ 7♣"],
        trump_card="A♥",
        first_game=False,
        dealer=1,
    )
    assert state.attacker == 0 and state.defender == 1
    after_spade = play(state, "0: attack 9♠")
    assert legal(after_spade, 1) == {
        "beat 9♠ 10♠",
        "beat 9♠ 6♥",
        "beat 9♠ 10♥",
        "beat 9♠ 8♥",
        "take",
        "swap 6♥",  # 1 holds the trump six and the stock is not empty
    }
    after_heart = play(state, "0: attack 9♥")
    assert legal(after_heart, 1) == {"beat 9♥ 10♥", "take", "swap 6♥"}
    with pytest.raises(IllegalActionError, match="cannot beat 9♥ 8♥"):
        play(after_heart, "1: beat 9♥ 8♥")


# --- 6. Attacks and throw-ins ------------------------------------------------------------


def _three_sevens() -> list[str]:
    return ["7♠ 7♥ 7♦ 6♣ 9♠ 10♠", "8♠ J♠ Q♠ K♠ A♠ 9♦", "8♣ 8♦ 10♣ 8♥ J♦ Q♦"]


def test_several_cards_of_one_rank_may_be_led_at_once() -> None:
    state = game(_three_sevens(), trump_card="A♣")
    assert state.attacker == 0
    leads = {a for a in legal(state, 0) if a.count(" ") > 1}
    assert leads == {"attack 7♠ 7♥", "attack 7♠ 7♦", "attack 7♥ 7♦", "attack 7♠ 7♥ 7♦"}
    after = play(state, "0: attack 7♦ 7♠")  # any order is the same action
    assert after.attack == (C("7♠"), C("7♦"))
    # The defender beats each card separately, in any order.
    after = play(after, "1: beat 7♦ 9♦", "1: beat 7♠ 8♠")
    assert after.defense == (C("8♠"), C("9♦"))


def test_multi_card_lead_can_be_switched_off() -> None:
    state = game(_three_sevens(), trump_card="A♣", rules=Rules(multi_card_lead=False))
    assert all(a.count(" ") == 1 for a in legal(state, 0))
    with pytest.raises(IllegalActionError):
        play(state, "0: attack 7♠ 7♥")


def test_german_example_throw_ins_match_attack_or_defence_ranks() -> None:
    """Clubs trump. Anna (0) attacks Ben (1) with 8♦; Ben beats with J♦; Anna may add
    any 8 or J: 8♠; Ben beats with 6♣; Carla (2) adds J♥; Ben beats with Q♥; nobody
    has an 8, J, 6 or Q left, so the attack is beaten off and Ben attacks next."""
    state = game(
        ["8♦ 8♠ 7♠ 9♠ 10♠ K♠", "J♦ 6♣ Q♥ 7♥ 9♥ 10♥", "J♥ 7♦ 9♦ 10♦ K♦ A♦"],
        trump_card="A♣",
        dealer=2,
        first_game=False,
    )
    assert (state.attacker, state.defender) == (0, 1)
    state = play(state, "0: attack 8♦", "1: beat 8♦ J♦")
    assert legal(state, 0) == {"attack 8♠", "pass"}
    assert legal(state, 2) == {"attack J♥", "pass"}
    state = play(state, "0: attack 8♠", "1: beat 8♠ 6♣", "2: attack J♥", "1: beat J♥ Q♥")
    assert Discarded(cards("8♦ 8♠ J♥ J♦ 6♣ Q♥")) in state.events
    assert (state.attacker, state.defender) == (1, 2)
    assert [e.player for e in state.events if isinstance(e, Drew)] == [0, 2, 1]


def test_only_ranks_on_the_table_may_be_thrown_in() -> None:
    state = game(
        ["8♦ 8♠ 7♠ 9♠ 10♠ K♠", "J♦ 6♣ Q♥ 7♥ 9♥ 10♥", "J♥ 7♦ 9♦ 10♦ K♦ A♦"],
        trump_card="A♣",
        dealer=2,
        first_game=False,
    )
    state = play(state, "0: attack 8♦")
    with pytest.raises(IllegalActionError):
        play(state, "2: attack 7♦")  # no 7 on the table
    with pytest.raises(IllegalActionError):
        play(state, "1: attack 7♥")  # the defender never throws in


def _four_player_throw_in() -> list[str]:
    return [
        "7♠ 6♣ 9♠ 10♠ J♠ Q♠",  # 0 attacks (lowest trump 6♣)
        "8♠ K♠ A♠ 9♦ 10♦ J♦",  # 1 defends
        "7♥ 9♥ 10♥ J♥ Q♥ K♥",  # 2, the defender's other (left) neighbour
        "7♦ Q♦ K♦ A♦ 8♥ 6♥",  # 3, across the table from the defender
    ]


def test_everyone_but_the_defender_may_throw_in_by_default() -> None:
    state = play(game(_four_player_throw_in(), trump_card="A♣"), "0: attack 7♠")
    assert legal(state, 2) == {"attack 7♥", "pass"}
    assert legal(state, 3) == {"attack 7♦", "pass"}
    assert waiting_for(state) == (1, 2, 3)


def test_neighbours_option_lets_only_the_attacker_and_the_defenders_left_throw_in() -> None:
    rules = Rules(throw_in="neighbours")
    state = play(game(_four_player_throw_in(), trump_card="A♣", rules=rules), "0: attack 7♠")
    assert legal(state, 2) == {"attack 7♥", "pass"}
    assert legal(state, 3) == set()
    with pytest.raises(IllegalActionError):
        play(state, "3: attack 7♦")


# --- 7. Limits ---------------------------------------------------------------------------


def _first_bout_limit() -> list[str]:
    return [
        "6♥ 7♠ 7♥ 7♦ 9♠ 10♠",
        "8♠ J♠ Q♠ K♠ A♠ 9♦",
        "8♣ 8♦ 7♣ 8♥ J♦ Q♦",
    ]


def test_first_bout_has_at_most_five_attack_cards() -> None:
    state = game(_first_bout_limit(), trump_card="A♥")
    assert state.limit == 5
    state = play(
        state,
        "0: attack 7♠",
        "1: beat 7♠ 8♠",
        "0: attack 7♥",
        "2: attack 8♣",
        "1: take",
        "0: attack 7♦",
    )
    assert legal(state, 2) == {"attack 8♦", "attack 7♣", "attack 8♥", "pass"}
    state = play(state, "2: attack 8♦")
    # Five attack cards: 2 still holds 7♣ and 8♥ but may not add them; the bout ends.
    picked = [e for e in state.events if isinstance(e, PickedUp)]
    assert picked == [PickedUp(1, cards("7♠ 7♥ 8♣ 7♦ 8♦ 8♠"))]
    assert state.hand_size(1) == 11


def test_first_bout_limit_can_be_switched_off() -> None:
    state = game(_first_bout_limit(), trump_card="A♥", rules=Rules(first_bout_limit=False))
    assert state.limit == 6
    state = play(
        state,
        "0: attack 7♠",
        "1: beat 7♠ 8♠",
        "0: attack 7♥",
        "2: attack 8♣",
        "1: take",
        "0: attack 7♦",
        "2: attack 8♦",
        "2: attack 7♣",
    )
    assert PickedUp(1, cards("7♠ 7♥ 8♣ 7♦ 8♦ 7♣ 8♠")) in state.events


def test_limit_is_the_defenders_hand_at_the_start_of_the_bout() -> None:
    rules = Rules(deck_size=24)
    state = game(
        [
            "9♣ 10♠ 10♥ 9♠ 9♥ 9♦",
            "J♠ J♥ 10♦ 10♣ J♦ J♣",
            "Q♦ Q♣ K♦ K♣ A♥ A♦",
            "Q♠ Q♥ K♠ K♥ A♠ A♣",
        ],
        trump_card=None,
        dealer=3,
        rules=rules,
    )
    assert state.trump_card == C("A♣") and state.attacker == 0
    state = play(state, "0: attack 10♠ 10♥", "1: beat 10♠ J♠", "1: beat 10♥ J♥")
    assert (state.attacker, state.defender, state.limit) == (1, 2, 6)
    state = play(state, "1: attack 10♦", "2: take", "1: pass")
    assert (state.attacker, state.defender) == (3, 0)
    assert state.hand_size(0) == 4 and state.limit == 4
    state = play(state, "3: attack Q♠ Q♥", "0: take", "2: attack Q♦")
    assert legal(state, 2) == {"attack Q♣", "pass"}
    state = play(state, "2: attack Q♣")  # the fourth card: the limit, so the bout ends
    assert PickedUp(0, cards("Q♠ Q♥ Q♦ Q♣")) in state.events


def test_unbeaten_cards_never_exceed_the_defenders_hand() -> None:
    state = position(["7♠ 7♥ 7♦ 7♣", "A♥ K♥"], "6♦", attacker=0)
    assert state.limit == 2
    assert "attack 7♠ 7♥ 7♦" not in legal(state, 0)
    state = play(state, "0: attack 7♠ 7♥")
    assert legal(state, 0) == set()


# --- 8. How a bout ends ------------------------------------------------------------------


def test_a_pass_lasts_until_a_new_rank_lands() -> None:
    state = position(
        ["7♠ 7♥ 10♠", "8♠ 9♥ K♦ A♦ Q♣ J♣", "7♦ 9♣ 10♦"],
        "6♣",
        stock="6♦ 6♥",
        attacker=0,
    )
    state = play(state, "0: attack 7♠", "2: pass")
    assert 2 not in waiting_for(state)
    state = play(state, "0: attack 7♥")  # rank 7 is not new: 2 stays passed
    assert legal(state, 2) == set()
    assert waiting_for(state) == (1,)
    state = play(state, "1: beat 7♠ 8♠")  # 8 is new: 2 may throw in again (7♦)
    assert legal(state, 2) == {"attack 7♦", "pass"}
    state = play(state, "2: pass", "1: beat 7♥ 9♥")  # 9 is new again
    assert legal(state, 2) == {"attack 9♣", "attack 7♦", "pass"}
    assert waiting_for(state) == (2,)  # 0 holds no 7, 8 or 9: never holds the bout up
    state = play(state, "2: pass")
    assert any(isinstance(e, Discarded) for e in state.events)
    assert (state.attacker, state.defender) == (1, 2)


def test_after_take_attackers_throw_in_then_defender_picks_up_and_loses_the_turn() -> None:
    state = position(
        ["7♠ 7♥ 10♠", "8♠ 9♥ K♦ A♦ Q♣ J♣", "7♦ 9♣ 10♦"],
        "6♣",
        stock="6♦ 6♥ 8♦ 8♥ 10♥ J♥ Q♥",
        attacker=0,
    )
    state = play(state, "0: attack 7♠", "1: take")
    assert legal(state, 1) == set()
    assert waiting_for(state) == (0, 2)
    state = play(state, "2: attack 7♦", "0: attack 7♥")  # nobody has a 7 left: bout over
    picked = [e for e in state.events if isinstance(e, PickedUp)]
    assert picked == [PickedUp(1, cards("7♠ 7♦ 7♥"))]
    assert (state.attacker, state.defender) == (2, 0)  # the taker's left neighbour attacks
    assert set(cards("7♠ 7♦ 7♥")) <= set(view(state, 0).known_cards[1])


def test_defender_may_take_after_beating_some_cards() -> None:
    state = position(["7♠ 7♥", "8♠ 9♥ K♦", "A♣"], "6♣", stock="6♦ 8♦", attacker=0)
    state = play(state, "0: attack 7♠ 7♥", "1: beat 7♠ 8♠", "1: take")
    assert PickedUp(1, cards("7♠ 7♥ 8♠")) in state.events


def test_no_take_without_an_unbeaten_card() -> None:
    state = position(["7♠ 7♥", "8♠ 9♥ K♦", "7♣"], "6♣", stock="6♦ 8♦", attacker=0)
    state = play(state, "0: attack 7♠", "1: beat 7♠ 8♠")
    assert "take" not in legal(state, 1)
    assert waiting_for(state) == (0, 2)


def test_a_defender_with_no_cards_left_ends_the_bout_at_once() -> None:
    state = position(["7♠ 7♥ 7♦ 9♠", "8♠ 8♥", "7♣ K♦ A♦"], "6♣", attacker=0)
    state = play(state, "0: attack 7♠ 7♥", "1: beat 7♠ 8♠", "1: beat 7♥ 8♥")
    assert any(isinstance(e, Discarded) for e in state.events)
    assert PlayerOut(1) in state.events
    # 1 is out: 2 attacks next (the next player clockwise with cards) and defends 0.
    assert (state.attacker, state.defender) == (2, 0)


# --- 9. Refill ---------------------------------------------------------------------------


def test_spanish_example_full_bout_and_refill_order() -> None:
    """Spades trump; 4 attacks 1 with 7♥, 1 beats with 10♥; 2 adds 10♦, 1 beats with 8♠;
    3 adds 8♣, 1 beats with Q♣; bito; 4, 2, 3 draw, 1 draws last and attacks 2."""
    state = game(
        SPANISH_EXAMPLE_HANDS,
        trump_card="9♠",
    )
    state = play(
        state,
        "3: attack 7♥",
        "0: beat 7♥ 10♥",
        "1: attack 10♦",
        "0: beat 10♦ 8♠",
        "2: attack 8♣",
        "0: beat 8♣ Q♣",
    )
    assert Discarded(cards("7♥ 10♦ 8♣ 10♥ 8♠ Q♣")) in state.events
    drew = [(e.player, e.count) for e in state.events if isinstance(e, Drew)]
    assert drew == [(3, 1), (1, 1), (2, 1), (0, 3)]
    assert (state.attacker, state.defender) == (0, 1)
    assert all(state.hand_size(p) == 6 for p in range(4))
    assert view(state, 2).discard_count == 6


def test_when_the_stock_runs_out_the_last_ones_get_fewer_or_none() -> None:
    state = position(
        ["7♠ K♦ 9♠ 10♠ J♠ Q♠", "K♠ A♦ 10♥ J♥ Q♥ K♥", "7♦ 8♦ 9♦ 10♦ J♦ Q♦"],
        "A♣",
        stock="6♦",
        attacker=0,
    )
    state = play(state, "0: attack 7♠", "1: beat 7♠ K♠", "0: attack K♦", "1: beat K♦ A♦")
    assert waiting_for(state) == (2,)  # 2 still holds a 7
    state = play(state, "2: pass")
    drew = [e for e in state.events if isinstance(e, Drew)]
    # 0 needs two: gets 6♦ and the face-up A♣ (everyone sees that); 2 and 1 get none.
    assert drew == [Drew(0, 2, C("A♣"))]
    assert state.stock == ()
    assert C("A♣") in view(state, 1).known_cards[0]


# --- 10. Trump swap ----------------------------------------------------------------------


def test_the_lowest_trump_may_be_swapped_for_the_face_up_card_any_time() -> None:
    state = position(["7♠ 8♠ 9♠", "6♣ 9♥ 10♥", "7♦ 8♦ 9♦"], "A♣", stock="6♦ 6♥", attacker=0)
    assert "swap 6♣" in legal(state, 1)  # not their turn to attack, but a swap is fine
    state = play(state, "1: swap 6♣")
    assert C("A♣") in state.hand(1) and C("6♣") not in state.hand(1)
    assert state.trump_card == C("6♣") and state.stock[-1] == C("6♣")
    assert view(state, 0).known_cards[1] == (C("A♣"),)
    assert "swap 6♣" not in legal(state, 1)


def test_no_swap_when_the_option_is_off_or_the_stock_is_empty() -> None:
    hands = ["7♠ 8♠ 9♠", "6♣ 9♥ 10♥", "7♦ 8♦ 9♦"]
    off = position(hands, "A♣", stock="6♦", rules=Rules(trump_swap=False))
    assert all(not a.startswith("swap") for a in legal(off, 1))
    empty = position(hands, "A♣")
    assert all(not a.startswith("swap") for a in legal(empty, 1))


@pytest.mark.parametrize(("size", "low"), [(24, "9♣"), (52, "2♣")])
def test_swap_card_follows_the_deck(size: int, low: str) -> None:
    state = position(
        ["J♠ Q♠", f"{low} K♥", "A♦ K♦"], "A♣", stock="10♦", rules=Rules(deck_size=size)
    )
    assert f"swap {low}" in legal(state, 1)


# --- 11. End of the game -----------------------------------------------------------------


def test_last_player_with_cards_is_the_durak() -> None:
    state = position(["7♠", "8♠ 9♥"], "6♣", attacker=0)
    state = play(state, "0: attack 7♠", "1: beat 7♠ 8♠")
    assert state.over and state.durak == 1
    assert GameOver(1, (0, 1)) in state.events
    assert result(state) == GameResult(1, (0, 1))
    assert all(legal_actions(state, p) == [] for p in (0, 1))
    assert waiting_for(state) == ()


def test_draw_when_the_last_defender_beats_the_last_attack_with_the_last_card() -> None:
    state = position(["7♠", "8♠"], "6♣", attacker=0)
    state = play(state, "0: attack 7♠", "1: beat 7♠ 8♠")
    final = result(state)
    assert state.over and final is not None and final.draw
    assert final.order == (0, 1)


def test_players_out_are_skipped_and_the_next_with_cards_attacks() -> None:
    state = position(["K♠", "7♥ 8♥", "9♥ 8♣", "J♣ 7♣"], "6♣", attacker=3, defender=0)
    assert state.limit == 1  # 0 holds one card: 1 may not add its 7♥
    state = play(state, "3: attack 7♣", "0: take")
    assert PickedUp(0, (C("7♣"),)) in state.events
    # 0 took: 1 (their left) attacks, 2 defends; nobody is out yet.
    assert (state.attacker, state.defender) == (1, 2)
    state = play(state, "1: attack 7♥", "2: beat 7♥ 9♥", "0: attack 7♣", "2: beat 7♣ 8♣")
    assert PlayerOut(2) in state.events
    # 2 beat everything with their last cards and is out: 3 (next with cards) attacks 0.
    assert (state.attacker, state.defender) == (3, 0)
    assert 2 in state.out


def test_finishing_order_and_game_over() -> None:
    state = position(["7♠", "8♠ 9♥", "10♦ J♦"], "6♣", attacker=0)
    state = play(state, "0: attack 7♠", "1: beat 7♠ 8♠")  # 2 holds no 7 or 8
    assert state.out == (0,)
    assert (state.attacker, state.defender) == (1, 2)
    state = play(state, "1: attack 9♥", "2: take")
    assert state.over and state.durak == 2
    assert result(state) == GameResult(2, (0, 1, 2))


# --- 12. Transfer ------------------------------------------------------------------------

PEREVODNOY = Rules(variant="perevodnoy")


def test_transfer_passes_the_attack_to_the_left_neighbour_who_may_transfer_again() -> None:
    state = position(
        ["7♠ K♠ Q♠", "7♥ 9♥ 10♥", "7♦ 9♦ 10♦", "A♦ K♦ Q♦"],
        "6♣",
        stock="8♦",
        attacker=0,
        rules=PEREVODNOY,
    )
    state = play(state, "0: attack 7♠")
    assert "transfer 7♥" in legal(state, 1)
    state = play(state, "1: transfer 7♥")
    assert (state.attacker, state.defender, state.limit) == (1, 2, 3)
    assert legal(state, 1) == set()  # 1 has no more sevens to throw in
    state = play(state, "2: transfer 7♦")
    assert (state.attacker, state.defender) == (2, 3)
    assert legal(state, 3) >= {"take"}
    assert not any(a.startswith("transfer") for a in legal(state, 3))  # no seven
    state = play(state, "3: take")
    assert PickedUp(3, cards("7♠ 7♥ 7♦")) in state.events
    assert (state.attacker, state.defender) == (0, 1)  # the taker's left attacks
    # Refill starts with the bout's leader (0), then clockwise, the defender (3) last.
    assert [e.player for e in state.events if isinstance(e, Drew)] == [0]


def test_no_transfer_once_a_card_is_beaten_or_into_a_smaller_hand() -> None:
    state = position(
        ["7♠ 7♣ Q♠", "7♥ 8♠ 10♥", "J♦"], "6♣", stock="8♦", attacker=0, rules=PEREVODNOY
    )
    state = play(state, "0: attack 7♠ 7♣")
    # 2 holds one card: two attack cards plus the transferred one would be three.
    assert not any(a.startswith("transfer") for a in legal(state, 1))
    state = position(
        ["7♠ 7♣ Q♠", "7♥ 8♠ 8♣ 10♥", "J♦ Q♦ K♦"], "6♣", stock="8♦", attacker=0, rules=PEREVODNOY
    )
    state = play(state, "0: attack 7♠ 7♣")
    assert "transfer 7♥" in legal(state, 1)
    state = play(state, "1: beat 7♠ 8♠")
    assert not any(a.startswith("transfer") for a in legal(state, 1))


def test_transfer_is_off_in_podkidnoy() -> None:
    state = position(["7♠ K♠", "7♥ 9♥", "7♦ 9♦"], "6♣", stock="8♦", attacker=0)
    state = play(state, "0: attack 7♠")
    assert not any(a.startswith("transfer") for a in legal(state, 1))


# --- 13. Series --------------------------------------------------------------------------


def test_series_counts_duraks_and_first_outs_and_the_durak_deals_next() -> None:
    series = Series.start(Rules(series_length=3), 3)
    first = series.next_game(seed=5)
    assert first.dealer == 0 and first.bout == 0
    series = series.record(GameResult(durak=2, order=(1, 0, 2)))
    assert series.durak_counts == (0, 0, 1) and series.first_out_counts == (0, 1, 0)
    second = series.next_game(seed=6)
    assert second.dealer == 2 and second.attacker == 0  # the dealer's left attacks
    series = series.record(GameResult(durak=None, order=(0, 1)))
    assert series.draws == 1 and series.last_durak is None
    third = series.next_game(
        deck=build_deck(
            ["7♠ 8♠ 9♠ 10♠ J♠ Q♠", "K♠ A♠ 6♥ 7♥ 8♥ 9♥", "8♦ 9♦ 10♦ 7♦ Q♥ K♥"], "A♦", dealer=2
        )
    )
    assert third.attacker == 2  # after a draw the lowest trump starts again
    series = series.record(GameResult(durak=1, order=(0, 2, 1)))
    assert series.finished and series.standings() == [0, 1, 2]


# --- Rules validation and errors ---------------------------------------------------------


def test_invalid_player_counts_and_options_get_clear_errors() -> None:
    with pytest.raises(RulesError, match="2 to 6 players, not 7"):
        new_game(Rules(), 7)
    with pytest.raises(RulesError, match="24-card deck deals 6 cards to at most 4 players"):
        new_game(Rules(deck_size=24), 5)
    with pytest.raises(RulesError, match="variant"):
        Rules.parse({"variant": "podkidnoy-deluxe"})
    with pytest.raises(RulesError, match="deck_size"):
        Rules.parse({"deck_size": 40})
    with pytest.raises(RulesError, match="unknown rules preset"):
        Rules.preset("nope")
    assert Rules.preset("perevodnoy").transfer
    with pytest.raises(RulesError, match="each of the 36 cards exactly once"):
        new_game(Rules(), 2, deck=[*list(deck_cards(36))[:-1], C("2♠")])


def test_illegal_actions_raise_and_leave_the_state_unchanged() -> None:
    state = game(_three_sevens(), trump_card="A♣")
    before = state.to_json()
    with pytest.raises(IllegalActionError, match="not their move"):
        play(state, "1: attack 8♠")
    with pytest.raises(IllegalActionError, match="legal now"):
        play(state, "0: attack A♠")  # not in their hand
    with pytest.raises(IllegalActionError, match="no seat 9"):
        legal_actions(state, 9)
    assert state.to_json() == before
