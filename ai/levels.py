"""The Easy and Normal computer players: rule-of-thumb play from the view alone."""

from __future__ import annotations

import random

from ai.cycles import progress_action
from ai.memory import Memory
from ai.policy import (
    NORMAL,
    VALUE,
    Style,
    defence_plan,
    lead_cards,
    simplest_move,
    throw_in_card,
    to_action,
    too_costly,
)
from engine.actions import (
    ATTACK_ONE,
    BEAT,
    PASS,
    TAKE,
    TRANSFER,
    Action,
    Attack,
    Swap,
    Transfer,
    attack_of,
)
from engine.cards import BEATERS, CARD_RANK_MASK, CARDS, mask_of
from engine.view import PlayerView


class NoMoveError(ValueError):
    """``choose`` was called on a view where the player has nothing to do."""


def _check(view: PlayerView) -> None:
    if not view.legal_actions:
        raise NoMoveError(f"player {view.player} has no legal action now")


def role(view: PlayerView) -> str:
    """'lead', 'defend', 'throw' or 'other' (only a swap is possible)."""
    acts = view.legal_actions
    if any(isinstance(a, Attack) for a in acts) and not view.table:
        return "lead"
    if TAKE in acts:
        return "defend"
    if PASS in acts:
        return "throw"
    return "other"


def _swap(view: PlayerView) -> Action | None:
    for a in view.legal_actions:
        if isinstance(a, Swap):
            return a
    return None


def _unbeaten(view: PlayerView) -> list[int]:
    return [int(a) for a, d in view.table if d is None]


def _ranks(view: PlayerView) -> int:
    ranks = 0
    for a, d in view.table:
        ranks |= CARD_RANK_MASK[a]
        if d is not None:
            ranks |= CARD_RANK_MASK[d]
    return ranks


class EasyPlayer:
    """Attacks with its lowest card, beats with the lowest card that beats, throws in
    low cards, takes when it cannot beat. Never transfers."""

    level = "easy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(self, view: PlayerView) -> Action:
        _check(view)
        swap = _swap(view)
        if swap is not None:
            return swap
        progress = progress_action(view)
        if progress is not None:
            return progress
        kind = role(view)
        if kind == "other":
            return view.legal_actions[0]
        unbeaten: list[int] | None = None  # leading
        if kind == "defend":
            unbeaten = _unbeaten(view)
        elif kind == "throw":
            unbeaten = []
        return to_action(simplest_move(mask_of(view.hand), view.trump, unbeaten, _ranks(view)))


class NormalPlayer:
    """Card sense: saves trumps, throws in what the defender seems to lack, weighs the
    stock, takes when beating costs too much, transfers with plain cards."""

    level = "normal"

    def __init__(self, seed: int = 0, style: Style = NORMAL) -> None:
        self.seed = seed
        self.style = style
        self.memory = Memory()
        self.rng = random.Random(seed)

    def choose(self, view: PlayerView) -> Action:
        _check(view)
        self.memory.update(view)
        action = self._choose(view)
        if action not in view.legal_actions:  # pragma: no cover - a safety net
            raise AssertionError(f"normal player chose illegal {action}")
        return action

    def _choose(self, view: PlayerView) -> Action:
        swap = _swap(view)
        if swap is not None:
            return swap
        progress = progress_action(view)
        if progress is not None:
            return progress
        style = self.style
        hand = mask_of(view.hand)
        trump = view.trump
        stock = view.stock_count
        kind = role(view)
        if kind == "lead":
            prefer = self._prefer(view, hand, hand) if stock <= style.late_stock else 0
            cards = lead_cards(
                hand, trump, view.limit, view.rules.multi_card_lead, stock, style, prefer
            )
            return attack_of(tuple(CARDS[c] for c in cards))
        if kind == "defend":
            plan = defence_plan(hand, _unbeaten(view), trump)
            transfers = [a for a in view.legal_actions if isinstance(a, Transfer)]
            if (
                transfers
                and style.transfer
                and (plan is None or any(c // 13 == trump for _, c in plan))
            ):
                plain = [t for t in transfers if t.card // 13 != trump]
                pick = plain or (transfers if plan is None else [])
                if pick:
                    return TRANSFER[min(pick, key=lambda t: VALUE[trump][t.card]).card]
            if plan is None or too_costly(plan, trump, stock, style):
                return TAKE
            a, c = plan[0]
            return BEAT[a][c]
        if kind == "throw":
            ranks = _ranks(view)
            prefer = self._prefer(view, hand, hand & ranks)
            c = throw_in_card(hand, ranks, trump, stock, style, prefer, view.taking)
            return PASS if c < 0 else ATTACK_ONE[c]
        return view.legal_actions[0]

    def _prefer(self, view: PlayerView, hand: int, cards: int) -> int:
        """Cards of ours the defender most likely cannot beat."""
        d = view.defender
        lacks = self.memory.lacks[d] if self.memory.lacks else 0
        elsewhere = mask_of(view.discard) | hand
        for a, d_card in view.table:
            elsewhere |= 1 << a
            if d_card is not None:
                elsewhere |= 1 << d_card
        for p, known in enumerate(view.known_cards):
            if p != d:
                elsewhere |= mask_of(known)
        their_known = mask_of(view.known_cards[d])
        out = 0
        m = cards
        beaters = BEATERS[view.trump]
        while m:
            low = m & -m
            m ^= low
            b = beaters[low.bit_length() - 1]
            if not b & their_known and not b & ~elsewhere & ~lacks:
                out |= low
        return out
