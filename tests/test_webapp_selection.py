"""What the Mini App's state says for a multi-card attack, whom the game waits on, and a
take (pure: ``bot.webapp.state`` on records made by the flow)."""

from __future__ import annotations

import itertools

from bot.domain import flow
from bot.domain.flow import Moment, Person, Timing
from bot.domain.place import Place
from bot.domain.records import ChatGame
from bot.webapp.state import game_state
from engine import Attack, Pass, Swap, Take, apply, legal_actions, view
from locales import translator

T0 = Moment(0.0, Timing(turn_timeout=60.0, ai_delay=1.0, notify_quiet=0.0))
ANN, BOB, CAROL = Person(1, "Ann"), Person(2, "Bob"), Person(3, "Carol")
EN = translator("en")


def dealt(game_id: str, people: tuple[Person, ...] = (ANN, BOB, CAROL)) -> ChatGame:
    game, _ = flow.new_lobby(None, T0, Place(-100), "Club", people[0], game_id)
    for person in people[1:]:
        game, _ = flow.join(game, T0, game_id, person)
    game, _ = flow.start(game, T0, game_id, 1, [])
    return game


def leads_with_a_pair(game: ChatGame) -> bool:
    state = game.engine_state()
    attacks = [a for a in legal_actions(state, 0) if isinstance(a, Attack)]
    return state.attacker == 0 and any(len(a.cards) > 1 for a in attacks)


def deal_where(test: object) -> ChatGame:
    """The first game (by a fixed list of ids, so every run the same) where ``test`` holds."""
    for n in itertools.count():
        game = dealt(f"ms{n:04d}")
        if test(game):  # type: ignore[operator]
            return game
    raise AssertionError  # pragma: no cover


def test_multi_card_attacks_are_one_selection_not_a_button_each() -> None:
    game = deal_where(leads_with_a_pair)
    state = game_state(game, 0, EN)
    multi = [a for a in state["legal"] if a.startswith("attack ") and a.count(" ") > 1]
    assert multi, "the page selects among these"
    assert state["texts"]["attack_with"] == "Attack with {cards}"
    assert state["texts"]["throw_in_with"] == "Throw in {cards}"
    assert state["texts"]["pick_more"]
    # The API keeps every field it had: each multi-card attack still has its label.
    assert all(action in state["labels"] for action in multi)
    # Leading: only Ann is waited on (the others are not outlined).
    assert [p["seat"] for p in state["players"] if p["waiting"]] == [0]
    assert not any(p["taking"] for p in state["players"])


def test_while_the_defender_thinks_only_the_defender_is_marked_and_a_take_is_badged() -> None:
    game = deal_where(leads_with_a_pair)
    engine_state = game.engine_state()
    pair = next(
        a for a in legal_actions(engine_state, 0) if isinstance(a, Attack) and len(a.cards) > 1
    )
    engine_state = apply(engine_state, 0, pair)
    game.set_engine_state(engine_state)
    defender = engine_state.defender
    for seat in range(3):
        seen = game_state(game, seat, EN)
        assert [p["seat"] for p in seen["players"] if p["waiting"]] == [defender]
        # The top-level list keeps its meaning: everyone the game may wait on.
        assert defender in [w["seat"] for w in seen["waiting"]]
    engine_state = apply(engine_state, defender, Take())
    game.set_engine_state(engine_state)
    ann = game_state(game, 0, EN)
    taking = [p["seat"] for p in ann["players"] if p["taking"]]
    assert taking == [defender] and ann["texts"]["takes"] == "takes"
    waited = {p["seat"] for p in ann["players"] if p["waiting"]}
    assert defender not in waited and waited <= set(view(engine_state, 0).must_act.may_add)
    if any(not isinstance(a, Swap) for a in legal_actions(engine_state, 0)):
        name = ann["players"][defender]["name"]
        assert ann["prompt"] == f"{name} takes: you may throw in more cards or pass."
    # Everyone passes: the defender picks the cards up, and the badge goes.
    while view(engine_state, 0).must_act.kind == "throw_in":
        seat = next(s for s in range(3) if Pass() in legal_actions(engine_state, s))
        engine_state = apply(engine_state, seat, Pass())
    game.set_engine_state(engine_state)
    assert not any(p["taking"] for p in game_state(game, 0, EN)["players"])
