"""Fixed deals for tests that fix game ids: the deal a game id gave before verifiable
deals (``game_seed``'s shuffle), with a salt made from the id, so a run is repeatable."""

from __future__ import annotations

import hashlib
import random

import pytest

from bot.app import deals
from bot.domain.deal import Deal
from bot.domain.flow import game_seed
from bot.domain.records import ChatGame
from engine.cards import deck_cards
from engine.commitment import SALT_BYTES


def seeded_deal(game: ChatGame | None) -> Deal | None:
    """What ``bot.app.deals.deal_for`` gives, but from the game id and the game's number."""
    if game is None:
        return None
    played = game.games_played
    order = list(deck_cards(game.rules.deck_size))
    random.Random(game_seed(game.game_id, played)).shuffle(order)
    salt = hashlib.sha256(f"test salt:{game.game_id}:{played}".encode()).digest()
    return Deal.of(salt[:SALT_BYTES], order)


def fix_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deals, "deal_for", seeded_deal)
