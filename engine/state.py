"""The full game state: an immutable value, serialisable to JSON exactly.

Hands, known cards and the discard pile are bit masks (see ``engine.cards``). The
state holds everything, including hidden cards, so it never leaves the server:
players and computer players only ever get ``engine.view``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from engine.cards import CARDS, Card, cards_of, mask_of
from engine.events import EVENT_TYPES, Event
from engine.rules import Rules

STATE_FORMAT = 1

# The public history as a cons list, newest step first: (older history, that step's events).
# Appending is O(1), which matters when search copies states millions of times.
History = tuple["History | None", tuple[Event, ...]]


class State(NamedTuple):
    rules: Rules
    num_players: int
    dealer: int
    trump: int
    trump_card: Card
    """The face-up trump card (or the dealer's shown card when there is no stock)."""
    stock: tuple[Card, ...]
    """Cards still to draw, in order; while not empty its last card is ``trump_card``."""
    hands: tuple[int, ...]
    known: tuple[int, ...]
    """Per player: cards everyone knows they hold (picked up, shown, swapped, drawn trump)."""
    discard: int
    attack: tuple[Card, ...]
    defense: tuple[Card | None, ...]
    """Parallel to ``attack``: the card covering each attack card, or None."""
    ranks: int
    """All cards of the ranks on the table (what may be thrown in)."""
    leader: int
    """Who opened the bout; draws first."""
    attacker: int
    """Who attacks the current defender (the leader, or the last player who transferred)."""
    defender: int
    limit: int
    passed: int
    """Bit set of attackers who passed since the last new rank landed."""
    taking: bool
    bout: int
    out: tuple[int, ...]
    """Players who went out, in finishing order."""
    over: bool
    durak: int | None
    step: int
    events: tuple[Event, ...]
    """The events of the last step."""
    history: History | None

    # --- derived, read-only helpers -------------------------------------------------

    def hand(self, player: int) -> tuple[Card, ...]:
        return cards_of(self.hands[player])

    def hand_size(self, player: int) -> int:
        return self.hands[player].bit_count()

    @property
    def table(self) -> tuple[tuple[Card, Card | None], ...]:
        return tuple(zip(self.attack, self.defense, strict=True))

    @property
    def trump_card_in_stock(self) -> bool:
        return bool(self.stock)

    def all_events(self) -> list[Event]:
        """The whole public history, oldest first."""
        steps: list[tuple[Event, ...]] = []
        node = self.history
        while node is not None:
            node, step_events = node
            steps.append(step_events)
        return [event for step_events in reversed(steps) for event in step_events]

    # --- JSON ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        steps: list[list[dict[str, Any]]] = []
        node = self.history
        while node is not None:
            node, step_events = node
            steps.append([event_to_dict(e) for e in step_events])
        steps.reverse()
        return {
            "format": STATE_FORMAT,
            "rules": self.rules.model_dump(mode="json"),
            "num_players": self.num_players,
            "dealer": self.dealer,
            "trump": self.trump,
            "trump_card": str(self.trump_card),
            "stock": [str(c) for c in self.stock],
            "hands": [[str(c) for c in cards_of(h)] for h in self.hands],
            "known": [[str(c) for c in cards_of(k)] for k in self.known],
            "discard": [str(c) for c in cards_of(self.discard)],
            "attack": [str(c) for c in self.attack],
            "defense": [None if c is None else str(c) for c in self.defense],
            "ranks": self.ranks,
            "leader": self.leader,
            "attacker": self.attacker,
            "defender": self.defender,
            "limit": self.limit,
            "passed": self.passed,
            "taking": self.taking,
            "bout": self.bout,
            "out": list(self.out),
            "over": self.over,
            "durak": self.durak,
            "step": self.step,
            "events": [event_to_dict(e) for e in self.events],
            "history": steps,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> State:
        if data.get("format") != STATE_FORMAT:
            raise ValueError(f"unsupported state format {data.get('format')!r}")
        history: History | None = None
        for step_events in data["history"]:
            history = (history, tuple(event_from_dict(e) for e in step_events))
        return cls(
            rules=Rules.model_validate(data["rules"]),
            num_players=int(data["num_players"]),
            dealer=int(data["dealer"]),
            trump=int(data["trump"]),
            trump_card=Card.parse(data["trump_card"]),
            stock=tuple(Card.parse(c) for c in data["stock"]),
            hands=tuple(mask_of(Card.parse(c) for c in h) for h in data["hands"]),
            known=tuple(mask_of(Card.parse(c) for c in k) for k in data["known"]),
            discard=mask_of(Card.parse(c) for c in data["discard"]),
            attack=tuple(Card.parse(c) for c in data["attack"]),
            defense=tuple(None if c is None else Card.parse(c) for c in data["defense"]),
            ranks=int(data["ranks"]),
            leader=int(data["leader"]),
            attacker=int(data["attacker"]),
            defender=int(data["defender"]),
            limit=int(data["limit"]),
            passed=int(data["passed"]),
            taking=bool(data["taking"]),
            bout=int(data["bout"]),
            out=tuple(int(p) for p in data["out"]),
            over=bool(data["over"]),
            durak=None if data["durak"] is None else int(data["durak"]),
            step=int(data["step"]),
            events=tuple(event_from_dict(e) for e in data["events"]),
            history=history,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> State:
        return cls.from_dict(json.loads(text))


_CARD_FIELDS = frozenset({"card", "attack", "gave", "got", "trump_card"})
_CARDS_FIELDS = frozenset({"cards"})


def _card_or_none(raw: Any) -> Card | None:
    return None if raw is None else Card.parse(raw)


def _card_text(card: Card | None) -> str | None:
    return None if card is None else str(card)


def _cards(raw: Any) -> tuple[Card, ...]:
    return tuple(Card.parse(c) for c in raw)


def _texts(cards: tuple[Card, ...]) -> list[str]:
    return [str(c) for c in cards]


def _seats(raw: Any) -> tuple[int, ...]:
    return tuple(int(p) for p in raw)


def _as_is(raw: Any) -> Any:
    return raw


_Codec = tuple[Callable[[Any], Any], Callable[[Any], Any] | None]


def _codec(name: str) -> _Codec:
    """How an event field is read from JSON and written to it (None: stored as it is, a
    number or a flag)."""
    if name in _CARD_FIELDS:
        return _card_or_none, _card_text
    if name in _CARDS_FIELDS:
        return _cards, _texts
    if name == "order":
        return _seats, list
    return _as_is, None


_Field = tuple[int, str, Callable[[Any], Any], Callable[[Any], Any] | None, bool]
"""Position, name, decoder, encoder (see ``_codec``), whether it has a default."""

# Per event type, every field but kind: a stored game holds hundreds of events, so the
# per-field decisions are made once, here.
_FIELDS: dict[str, tuple[type[Event], tuple[_Field, ...]]] = {
    kind: (
        cls,
        tuple(
            (i, name, *_codec(name), name in cls._field_defaults)
            for i, name in enumerate(cls._fields)
            if name != "kind"
        ),
    )
    for kind, cls in EVENT_TYPES.items()
}


def event_to_dict(event: Event) -> dict[str, Any]:
    data: dict[str, Any] = {"type": event.kind}
    for i, name, _, encode, _ in _FIELDS[event.kind][1]:
        value = event[i]
        data[name] = value if encode is None else encode(value)
    return data


def event_from_dict(data: dict[str, Any]) -> Event:
    cls, fields = _FIELDS[data["type"]]
    kwargs: dict[str, Any] = {}
    for _, name, decode, _, has_default in fields:
        if has_default and name not in data:
            continue  # a field added later: games stored before it get its default
        kwargs[name] = decode(data[name])
    return cls(**kwargs)


__all__ = ["CARDS", "History", "State", "event_from_dict", "event_to_dict"]
