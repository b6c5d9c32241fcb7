"""Deals anyone can verify: a deck order's text, its commitment and the reveal token.

Before the first card is dealt the table shows ``short(commit(salt, deck))``. The game's
result carries a reveal token (``format_reveal``) with the salt and the deck order, so
anyone can recompute the commitment (``verify``, the ``durak-verify`` script, or
``sha256sum`` by hand, see docs/verify.md) and compare it with the code shown before the
deal. SHA-256 cannot be steered, so a bot that changed the stock after showing the code
would have to find another salt and deck with the same code (see ``SHORT_HEX``).

What it proves: the whole deck order, the stock included, was fixed before the deal and
not changed during play. What it does not prove: that the order was shuffled fairly; that
rests on ``bot.app.deals.new_secret_deal`` using the system's cryptographic source.

Pure, like the rest of ``engine``: no I/O, no clock, no random.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from engine.cards import CARDS, LOWEST_RANK, Card, cards_of, rank_name, sort_key
from engine.errors import ParseError, RulesError
from engine.game import new_game
from engine.rules import Rules

VERSION: Final = 1
DOMAIN: Final = b"durak-deal-v1\n"
"""Prefixed to every hashed text, so a v1 commitment can never equal a hash made for
another purpose or another version of this format."""
SALT_BYTES: Final = 16
"""The salt hides the deck until the reveal. Without it, a player who knows their own
hand and the trump card could try the few remaining orders of a small deck (24 cards at
4 players leave 17! ≈ 2^48 orders) until one matches the code, and see every hand. With
128 random bits nobody can try them all."""
SHORT_HEX: Final = 32
"""Hex characters of the commitment the table shows: 128 bits.

The attacker is the bot itself, and it picks both decks: it may shuffle two decks that
deal the same hands but differ in the stock, then try salts for each until two codes
agree, and later reveal whichever stock suits it. That is a birthday search: finding two
of anything with the same n-bit code takes about 2^(n/2) hashes. At 16 hex characters (64
bits) that is 2^32 hashes, seconds on one graphics card: not enough. At 32 (128 bits) it is
2^64 hashes for every game, beyond any bot operator's budget (and, against a bot that only
tries to match a code it already showed, 2^128). The full 64-character hash adds nothing a
person would check by eye."""

RANK_CODES: Final = "23456789TJQKA"
SUIT_CODES: Final = "shdc"
"""Card codes are the ASCII form ``Card.parse`` reads (``Th`` for 10♥, ``6s`` for 6♠):
one rank and one suit letter each, so a deck text is 2 characters a card, the same bytes
for every shell, keyboard and chat client (a suit symbol may come back from a chat with
an emoji variation selector attached, and then no hash matches)."""
_CODES: Final = tuple(RANK_CODES[c.rank - 2] + SUIT_CODES[c.suit] for c in CARDS)
_BY_CODE: Final = {code: CARDS[i] for i, code in enumerate(_CODES)}
_HEX: Final = re.compile(r"[0-9a-f]*")
_MARKER: Final = "🔐"

# "deal v1 p3 <salt> <deck> <code>", the lock emoji optional (a copy may lose it). Fields
# are ASCII letters and digits only, so the token ends at any punctuation, tag or emoji of
# the localized text around it; a damaged field is still found, and verify says why.
_REVEAL: Final = re.compile(
    r"\bdeal\s+v([0-9]{1,3})\s+p([0-9]{1,2})\s+([0-9A-Za-z]+)\s+([0-9A-Za-z]+)\s+([0-9A-Za-z]+)"
)


# --- deck text --------------------------------------------------------------------------


def card_code(card: Card) -> str:
    """A card's two-character code: ``Th`` (10♥), ``6s`` (6♠), ``Ac`` (A♣)."""
    return _CODES[card]


def deck_text(deck: Iterable[Card]) -> str:
    """The canonical text of a deck order: the cards' codes in deal order, no separator
    (``6sTh…``; 104 characters for 52 cards)."""
    return "".join(_CODES[card] for card in deck)


def parse_deck_text(text: str) -> tuple[Card, ...]:
    """The cards of a deck text, in order; ``ParseError`` unless it is canonical (only the
    exact codes ``deck_text`` writes, so one deck has one text and one hash)."""
    if len(text) % 2:
        raise ParseError(f"a deck text has 2 characters a card, not {len(text)} characters")
    cards = []
    for index in range(0, len(text), 2):
        code = text[index : index + 2]
        card = _BY_CODE.get(code)
        if card is None:
            raise ParseError(
                f"card {index // 2 + 1} {code!r} is not a card code "
                f"(rank {RANK_CODES}, suit {SUIT_CODES}, e.g. Th for 10♥)"
            )
        cards.append(card)
    return tuple(cards)


def deck_problem(deck: Sequence[Card]) -> str | None:
    """Why ``deck`` is not a whole 24, 36 or 52 card deck in some order; None if it is."""
    if len(deck) not in LOWEST_RANK:
        return f"a deck has 24, 36 or 52 cards, this one has {len(deck)}"
    seen: set[Card] = set()
    for card in deck:
        if card in seen:
            return f"{card} appears twice"
        seen.add(card)
    low = LOWEST_RANK[len(deck)]
    for card in deck:
        if card.rank < low:
            return f"{card} is not in a {len(deck)}-card deck ({rank_name(low)} to A)"
    return None


# --- commitment -------------------------------------------------------------------------


def commitment_text(salt: bytes, deck: Iterable[Card]) -> bytes:
    """The exact bytes hashed: ``durak-deal-v1``, the salt in lowercase hex and the deck
    text, one per line, no final newline. Hex and the fixed-width codes hold no newline,
    so the parts can never be split differently."""
    return DOMAIN + salt.hex().encode("ascii") + b"\n" + deck_text(deck).encode("ascii")


def commit(salt: bytes, deck: Iterable[Card]) -> str:
    """The commitment to a deck order: SHA-256 of ``commitment_text``, 64 hex characters."""
    if len(salt) < SALT_BYTES:
        raise ValueError(f"the salt needs at least {SALT_BYTES} bytes, not {len(salt)}")
    return hashlib.sha256(commitment_text(salt, deck)).hexdigest()


def short(commitment: str) -> str:
    """The code the table shows before the deal: the commitment's first ``SHORT_HEX``
    hex characters."""
    if len(commitment) != 64 or not _HEX.fullmatch(commitment):
        raise ValueError(f"not a SHA-256 hex digest: {commitment!r}")
    return commitment[:SHORT_HEX]


def grouped(code: str) -> str:
    """A code in groups of 4 (``3f2a 9c1b …``), easier to compare by eye. Displays only:
    the reveal token and the hash use the code without spaces."""
    return " ".join(code[i : i + 4] for i in range(0, len(code), 4))


# --- what a person can compare ----------------------------------------------------------


@dataclass(frozen=True)
class DealtCards:
    """What a deck order deals to ``players`` players, as ``engine.new_game(deck=...)``
    deals it: the things a person saw at the table."""

    players: int
    trump_card: Card
    hands: tuple[tuple[Card, ...], ...]
    """Hands from the dealer's left neighbour (who got the first card) clockwise; the
    last one is the dealer's. Each sorted for display, trumps last."""
    stock: int
    """Cards left in the stock after the deal, the face-up trump card included."""


def dealt_cards(deck: Sequence[Card], players: int) -> DealtCards:
    """The trump card and the hands ``deck`` deals to ``players`` players; ``RulesError``
    if the deck is not a whole deck or that many players cannot play with it."""
    problem = deck_problem(deck)
    if problem is not None:
        raise RulesError(problem)
    rules = Rules.model_validate({"deck_size": len(deck)})
    # Dealer in the last seat: seat 0 is their left neighbour, and seats run clockwise.
    state = new_game(rules, players, deck=tuple(deck), dealer=players - 1)
    trump = state.trump
    hands = tuple(
        tuple(sorted(cards_of(mask), key=lambda card: sort_key(card, trump)))
        for mask in state.hands
    )
    return DealtCards(players, state.trump_card, hands, len(state.stock))


# --- reveal -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Reveal:
    """One reveal token as found in a message, fields as written (``verify`` checks them)."""

    version: int
    players: int
    """How many played: not part of the commitment, it says how the deck was dealt."""
    salt_hex: str
    deck_text: str
    short: str

    def __str__(self) -> str:
        return (
            f"{_MARKER} deal v{self.version} p{self.players} "
            f"{self.salt_hex} {self.deck_text} {self.short}"
        )


def format_reveal(salt: bytes, deck: Sequence[Card], players: int) -> str:
    """The reveal token for a result message, the same in every language:
    ``🔐 deal v1 p3 <salt hex> <deck text> <code>`` (ASCII apart from the emoji; no
    ``< > &``, so it goes into Telegram HTML as it is). ``ValueError`` on a deck or player
    count that would not verify: the bot must never publish a reveal that fails."""
    reveal = Reveal(VERSION, players, salt.hex(), deck_text(deck), short(commit(salt, deck)))
    checked = verify(reveal)
    if not checked.ok:
        raise ValueError(f"this deal would not verify: {checked.reason}")
    return str(reveal)


def parse_reveals(text: str) -> list[Reveal]:
    """Every reveal token in ``text`` (a whole result message, any language, a series'
    several games), in order of appearance."""
    return [
        Reveal(int(m[1]), int(m[2]), salt_hex=m[3], deck_text=m[4], short=m[5])
        for m in _REVEAL.finditer(text)
    ]


# --- verifying --------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyResult:
    """The verdict on one reveal, and what a person can compare with what they saw."""

    reveal: Reveal
    problems: tuple[str, ...]
    """Empty when the reveal verifies."""
    commitment: str | None
    """SHA-256 of the revealed salt and deck (when both could be read), whether or not it
    matches the code in the message."""
    deck: tuple[Card, ...] | None
    dealt: DealtCards | None
    """The trump card and the hands, when the deck and the player count are valid."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def reason(self) -> str:
        """Why it failed, in plain words; ``""`` when it verifies."""
        return "; ".join(self.problems)


def verify(reveal: Reveal) -> VerifyResult:
    """Check a reveal: a version this code knows, a long enough salt, a canonical deck
    text of a whole deck, a possible player count, and the code in the message equal to
    the commitment's start. Every problem found is listed."""
    if reveal.version != VERSION:
        problem = f"format v{reveal.version} is unknown here (this verifier reads v{VERSION})"
        return VerifyResult(reveal, (problem,), None, None, None)
    problems: list[str] = []
    salt = _read_salt(reveal.salt_hex, problems)
    deck: tuple[Card, ...] | None = None
    try:
        deck = parse_deck_text(reveal.deck_text)
    except ParseError as error:
        problems.append(f"deck: {error}")
    commitment = None if salt is None or deck is None else commit(salt, deck)
    if commitment is not None and short(commitment) != reveal.short:
        problems.append(
            f"commitment mismatch: the revealed salt and deck give {short(commitment)}, "
            f"the message shows {reveal.short}"
        )
    dealt = None if deck is None else _read_dealt(deck, reveal.players, problems)
    return VerifyResult(reveal, tuple(problems), commitment, deck, dealt)


def _read_salt(salt_hex: str, problems: list[str]) -> bytes | None:
    if not _HEX.fullmatch(salt_hex) or len(salt_hex) % 2:
        problems.append("salt: not lowercase hex bytes")
        return None
    if len(salt_hex) < 2 * SALT_BYTES:
        problems.append(f"salt: {len(salt_hex) // 2} bytes, at least {SALT_BYTES} needed")
        return None
    return bytes.fromhex(salt_hex)


def _read_dealt(deck: tuple[Card, ...], players: int, problems: list[str]) -> DealtCards | None:
    try:
        return dealt_cards(deck, players)
    except RulesError as error:
        problems.append(f"deck: {error}" if deck_problem(deck) else f"players: {error}")
        return None
