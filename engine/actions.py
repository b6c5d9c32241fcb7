"""Actions: small immutable values with a stable English text form.

``attack 7♥`` (a lead or a throw-in), ``attack 7♥ 7♠`` (several of one rank),
``beat 7♥ 10♥`` (beat 7♥ with 10♥), ``take``, ``pass``, ``transfer 7♠``, ``swap 6♠``.

Instances are interned (one object per distinct action) so the engine can hand out
legal-action lists without allocating.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Final

from engine.cards import CARDS, Card, mask_of
from engine.errors import ParseError


@dataclass(frozen=True, slots=True)
class Attack:
    """Lead a bout or throw in: one card, or several of one rank when leading."""

    cards: tuple[Card, ...]
    mask: int = field(init=False, repr=False, compare=False)
    """The cards as a bit mask (derived, for the engine's hot path)."""
    kind: ClassVar[str] = "attack"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mask", mask_of(self.cards))

    def __str__(self) -> str:
        return "attack " + " ".join(str(c) for c in self.cards)


@dataclass(frozen=True, slots=True)
class Beat:
    """Cover the attack card ``attack`` with ``card``."""

    attack: Card
    card: Card
    kind: ClassVar[str] = "beat"

    def __str__(self) -> str:
        return f"beat {self.attack} {self.card}"


@dataclass(frozen=True, slots=True)
class Take:
    kind: ClassVar[str] = "take"

    def __str__(self) -> str:
        return "take"


@dataclass(frozen=True, slots=True)
class Pass:
    """An attacker is done throwing in (until a new rank lands on the table)."""

    kind: ClassVar[str] = "pass"

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Transfer:
    """Perevodnoy: add a card of the attack rank and pass the attack on."""

    card: Card
    kind: ClassVar[str] = "transfer"

    def __str__(self) -> str:
        return f"transfer {self.card}"


@dataclass(frozen=True, slots=True)
class Swap:
    """Swap the lowest trump from the hand for the face-up trump card."""

    card: Card
    kind: ClassVar[str] = "swap"

    def __str__(self) -> str:
        return f"swap {self.card}"


Action = Attack | Beat | Take | Pass | Transfer | Swap

TAKE: Final = Take()
PASS: Final = Pass()
ATTACK_ONE: Final = tuple(Attack((c,)) for c in CARDS)
BEAT: Final = tuple(tuple(Beat(a, c) for c in CARDS) for a in CARDS)
TRANSFER: Final = tuple(Transfer(c) for c in CARDS)
SWAP: Final = tuple(Swap(c) for c in CARDS)
_MULTI_ATTACK: dict[tuple[Card, ...], Attack] = {}


def attack_of(cards: tuple[Card, ...]) -> Attack:
    """The interned ``Attack`` for these cards; several cards are kept in canonical
    (sorted) order so that ``attack 7♥ 7♠`` and ``attack 7♠ 7♥`` are one action."""
    if len(cards) == 1:
        return ATTACK_ONE[cards[0]]
    key = tuple(sorted(cards))
    found = _MULTI_ATTACK.get(key)
    if found is None:
        found = _MULTI_ATTACK[key] = Attack(key)
    return found


def _cards(words: list[str], text: str) -> tuple[Card, ...]:
    if not words:
        raise ParseError(f"{text!r}: which card?")
    return tuple(Card.parse(w) for w in words)


def parse_action(text: str) -> Action:
    """Parse an action's text form; ``ParseError`` when it is not one."""
    words = text.split()
    if not words:
        raise ParseError("empty action")
    verb, args = words[0].lower(), words[1:]
    if verb in ("take", "pass"):
        if args:
            raise ParseError(f"{text!r}: {verb} takes no cards")
        return TAKE if verb == "take" else PASS
    if verb == "attack":
        cards = _cards(args, text)
        if len(set(cards)) != len(cards):
            raise ParseError(f"{text!r}: a card appears twice")
        return attack_of(cards)
    if verb == "beat":
        if len(args) != 2:
            raise ParseError(f"{text!r}: expected 'beat <attack card> <your card>'")
        attack, card = _cards(args, text)
        return BEAT[attack][card]
    if verb in ("transfer", "swap"):
        if len(args) != 1:
            raise ParseError(f"{text!r}: expected '{verb} <card>'")
        card = Card.parse(args[0])
        return TRANSFER[card] if verb == "transfer" else SWAP[card]
    raise ParseError(f"unknown action {verb!r} (attack, beat, take, pass, transfer, swap)")
