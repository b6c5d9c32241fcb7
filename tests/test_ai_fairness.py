"""Fair by construction: the AI reads views only, and a view carries no hidden card."""

from __future__ import annotations

import ast
import dataclasses
import random
import subprocess
import sys
from pathlib import Path

import pytest

import ai
from ai.hard import HardPlayer
from engine import PRESETS, Card, PlayerView, Rules, State, apply, new_game, view, waiting_for
from engine.cards import mask_of
from engine.events import Drew
from engine.worlds import WorldError, determinize, hidden_slots, unseen_cards

AI_DIR = Path(ai.__file__).parent
FORBIDDEN = ("engine.state", "engine.game")


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", [alias.name for alias in node.names]))
    return found


def test_ai_never_imports_state_internals() -> None:
    files = sorted(AI_DIR.glob("*.py"))
    assert len(files) >= 6
    for path in files:
        for module, names in _imports(path):
            assert not module.startswith(FORBIDDEN), f"{path.name} imports {module}"
            assert module != "engine" or "State" not in names
            assert "__import__" not in path.read_text() and "importlib" not in module


def test_ai_modules_loaded_in_isolation_only_reach_the_engine_publicly() -> None:
    """Importing ai loads no module of its own that pulls engine.state in by name."""
    code = (
        "import sys, ai, ai.arena\n"
        "mods = [m for m in sys.modules if m.startswith('ai')]\n"
        "assert 'ai.hard' in mods and 'ai.solver' in mods\n"
        "for m in mods:\n"
        "    mod = sys.modules[m]\n"
        "    for name, value in vars(mod).items():\n"
        "        if getattr(value, '__name__', '') in ('engine.state', 'engine.game'):\n"
        "            raise SystemExit(f'{m}.{name} is {value.__name__}')\n"
        "print('clean')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "clean"


def _walk(obj: object, seen: set[int], cards: set[int]) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    assert not isinstance(obj, State), "a State inside a view"
    if isinstance(obj, Card):
        cards.add(int(obj))
    elif isinstance(obj, tuple | list | set | frozenset):
        for item in obj:
            _walk(item, seen, cards)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _walk(k, seen, cards)
            _walk(v, seen, cards)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            _walk(getattr(obj, f.name), seen, cards)


def _visible(v: PlayerView) -> int:
    """Cards the player may legitimately see: own hand, known, table, discard,
    trump card, and every card that ever appeared in a public event."""
    mask = mask_of(v.hand) | mask_of(v.discard) | 1 << v.trump_card
    for known in v.known_cards:
        mask |= mask_of(known)
    for a, d in v.table:
        mask |= 1 << a | (0 if d is None else 1 << d)
    return mask


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_view_graph_holds_no_state_and_no_hidden_card(preset: str) -> None:
    rules = Rules.preset(preset)
    rng = random.Random(preset)
    for n in (2, rules.max_players):
        state = new_game(rules, n, seed=rng.randrange(10**9))
        public = 0  # every card that has been face up so far
        while not state.over:
            for event in state.events:
                for value in event:
                    items = value if isinstance(value, tuple) else (value,)
                    public |= mask_of(c for c in items if isinstance(c, Card))
            for p in range(n):
                v = view(state, p)
                cards: set[int] = set()
                _walk(v, set(), cards)
                allowed = _visible(v) | public
                assert not mask_of(cards) & ~allowed, f"hidden card in player {p}'s view"
                others = 0
                for q in range(n):
                    if q != p:
                        others |= state.hands[q] & ~state.known[q]
                assert not mask_of(cards) & others & ~public
            p = waiting_for(state)[0]
            state = apply(state, p, rng.choice(view(state, p).legal_actions))


def test_hard_only_ever_receives_views(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spy on every call into the Hard player's search: no State is ever passed in."""
    seen: list[object] = []
    original = HardPlayer.choose

    def spy(self: HardPlayer, v: object) -> object:
        seen.append(v)
        assert isinstance(v, PlayerView)
        return original(self, v)

    monkeypatch.setattr(HardPlayer, "choose", spy)
    hard = ai.player("hard", seed=2, budget=ai.Budget(playouts=20, min_worlds=2, max_worlds=2))
    state = new_game(Rules(), 2, seed=3)
    while not state.over:
        p = waiting_for(state)[0]
        v = view(state, p)
        action = hard.choose(v) if p == 0 else v.legal_actions[0]
        state = apply(state, p, action)
    assert seen


def _truth(state: State, p: int) -> tuple[dict[int, tuple[Card, ...]], tuple[Card, ...]]:
    hands = {q: state.hand(q) for q in range(state.num_players) if q != p}
    return hands, state.stock


def test_determinize_rebuilds_the_true_state_from_the_truth() -> None:
    rng = random.Random(4)
    for preset in sorted(PRESETS):
        rules = Rules.preset(preset)
        n = rng.randrange(2, rules.max_players + 1)
        state = new_game(rules, n, seed=rng.randrange(10**9))
        while not state.over:
            p = waiting_for(state)[0]
            v = view(state, p)
            slots, stock_slots = hidden_slots(v)
            assert sum(slots.values()) + stock_slots == len(unseen_cards(v))
            world = determinize(v, *_truth(state, p))
            # Others' passes are theirs to know: the world has p's own pass only.
            assert world.passed == state.passed & 1 << p
            for q in range(n):
                if not state.passed >> q & 1:
                    assert view(world, q).legal_actions == view(state, q).legal_actions
                assert world.hands[q] == state.hands[q]
            assert world.stock == state.stock and world.discard == state.discard
            state = apply(state, p, rng.choice(v.legal_actions))


def test_determinize_rejects_inconsistent_guesses() -> None:
    state = new_game(Rules(), 2, seed=8)
    state = apply(state, waiting_for(state)[0], view(state, waiting_for(state)[0]).legal_actions[0])
    p = 0
    v = view(state, p)
    hands, stock = _truth(state, p)
    q = 1
    with pytest.raises(WorldError):  # wrong hand size
        determinize(v, {q: hands[q][:-1]}, stock)
    with pytest.raises(WorldError):  # the face-up trump card must stay at the bottom
        determinize(v, hands, (stock[-1], *stock[:-1]))
    with pytest.raises(WorldError):  # a card of our own hand in theirs
        determinize(v, {q: (v.hand[0], *hands[q][1:])}, stock)
    with pytest.raises(WorldError):  # missing a player
        determinize(v, {}, stock)
    # A swap of unknown cards between their hand and the stock is a valid guess.
    unknown = [c for c in hands[q] if c not in v.known_cards[q]]
    swapped = {q: (*[c for c in hands[q] if c != unknown[0]], stock[0])}
    world = determinize(v, swapped, (unknown[0], *stock[1:]))
    assert world.hands[q] != state.hands[q]


def test_memory_of_a_player_created_mid_game_matches_one_that_watched() -> None:
    from ai.memory import Memory

    rules = Rules()
    state = new_game(rules, 3, seed=21)
    watcher = Memory()
    rng = random.Random(1)
    drew = 0
    while not state.over:
        v = view(state, 0)
        watcher.update(v)
        late = Memory()
        late.update(v)
        assert late.lacks == watcher.lacks and late.took_count == watcher.took_count
        drew += any(isinstance(e, Drew) for e in state.events)
        p = waiting_for(state)[0]
        state = apply(state, p, rng.choice(view(state, p).legal_actions))
    assert drew
