"""The deal's reveal in a game's result: the token that lets anyone check the code shown
at Start (``engine.commitment``, docs/verify.md), and where to check it."""

from __future__ import annotations

from bot.domain.records import ChatGame
from locales import Translator


def reveal_lines(game: ChatGame, tr: Translator) -> list[str]:
    """The reveal token in ``<code>`` (a tap copies it) and the hint, for a finished game
    dealt from a secret deal; nothing for a running game (the salt stays secret until the
    end) or a game dealt before verifiable deals."""
    if game.deal is None or game.phase != "finished":
        return []
    # The token is ASCII letters, digits and one emoji: nothing to escape in HTML.
    token = game.deal.reveal(len(game.seats))
    return [f"<code>{token}</code>", tr.t("deal.check")]
