"""Breaking cycles: every level plays a "progress mode" after a run of taken bouts.

The rules have no repetition rule, and heuristic players can cycle once the stock is
empty: the same cards are led, taken and led again forever. Every cycle is a *streak*
of bouts that all end with a pick-up, with no discard, no draw from the stock and
nobody going out in between (each of those three is progress that can only happen
finitely often: cards leave the game, the stock shrinks, players leave).

The streak is read from the public history alone (``view.history``), so a player
created fresh for every decision computes the same thing. Once the streak reaches
``streak_limit(n)`` bouts, every computer player switches to progress mode until the
streak ends:

* the attacker leads a single card: its lowest card that is not a *top* card (no
  higher card of its suit is still in play outside its own hand), else its lowest
  card; it never leads the highest trump in play while it holds another card;
* nobody throws in (every attacker passes);
* the defender beats whenever it can cover the table, and never transfers.

Why this ends the streak: a bout in progress mode either ends beaten (a discard:
progress) or the defender picks up exactly the one led card, so the attacker's hand
shrinks by one. With 2 players the same attacker leads every bout and soon runs out
of cards (goes out: progress). With more players, after a pick-up the attack passes
two seats on; with an even number of players still in, the same half of them attack
every bout and again run out of cards. With an odd number every player defends once
every ``n`` bouts; if any trump is in play, its holder of the highest one never leads
it (unless it is its last card, and then it goes out), so it beats whatever it is led
-> discard. Only plain-suit endgames with an odd number of players rest on the
lead choice (no top card is led while another card is held): there the bound is
empirical (tests/test_ai_cycles.py; a 10-minute search over random 3-6 player
Easy/Normal games with every preset found no game that fails to end).
"""

from __future__ import annotations

from ai.policy import VALUE, defence_plan, full_defence, is_top
from engine.actions import ATTACK_ONE, BEAT, PASS, TAKE, Action, Beat
from engine.cards import mask_of
from engine.events import Discarded, Drew, Event, GameStarted, PickedUp, PlayerOut
from engine.view import PlayerView


def streak_limit(num_players: int) -> int:
    """Taken bouts in a row (without progress) after which progress mode starts."""
    return 2 * num_players + 2


def _progress(event: Event) -> bool:
    """A discard, a draw from the stock, a player going out, or a new game."""
    if isinstance(event, Drew):
        return event.count > 0
    return isinstance(event, Discarded | PlayerOut | GameStarted)


def streak(view: PlayerView) -> int:
    """Bouts ended by a pick-up since the last discard, draw or player out."""
    count = 0
    for event in reversed(view.history):
        if isinstance(event, PickedUp):
            count += 1
        elif _progress(event):
            break
    return count


def _in_play_elsewhere(view: PlayerView, hand: int) -> int:
    gone = mask_of(view.discard) | hand
    for a, d in view.table:
        gone |= 1 << a
        if d is not None:
            gone |= 1 << d
    return ~gone & ((1 << 52) - 1)


def progress_lead(view: PlayerView) -> int:
    """The single card to lead in progress mode."""
    trump = view.trump
    hand = mask_of(view.hand)
    elsewhere = _in_play_elsewhere(view, hand)
    cards = sorted((int(c) for c in view.hand), key=lambda c: (VALUE[trump][c], c))
    plain = [c for c in cards if not is_top(c, elsewhere)]
    # Only top cards left: the lowest one (never the highest trump while another
    # card is held, since it sorts last).
    return plain[0] if plain else cards[0]


def progress_action(view: PlayerView) -> Action | None:
    """The progress-mode action, or None when the streak is short (play normally)."""
    legal = view.legal_actions
    if not legal or streak(view) < streak_limit(view.num_players):
        return None
    hand = mask_of(view.hand)
    trump = view.trump
    if TAKE in legal:  # defending
        unbeaten = [int(a) for a, d in view.table if d is None]
        plan = defence_plan(hand, unbeaten, trump)
        if plan is None:
            plan = full_defence(hand, unbeaten, trump)
        if plan:
            a, c = plan[0]
            action: Action = BEAT[a][c]
            if action in legal:
                return action
        for act in legal:  # pragma: no cover - the plan's beat is always legal
            if isinstance(act, Beat) and plan:
                return act
        return TAKE
    if not view.table:
        lead = ATTACK_ONE[progress_lead(view)]
        if lead in legal:
            return lead
        return None  # pragma: no cover
    if PASS in legal:
        return PASS
    return None
