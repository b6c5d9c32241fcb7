"""Deals anyone can verify: deck text, commitment, reveal tokens, the verifier script."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.app.deals import new_secret_deal
from bot.ops.verify import main as verify_main
from engine import Rules, new_game
from engine.cards import CARDS, Card, deck_cards
from engine.commitment import (
    SALT_BYTES,
    SHORT_HEX,
    Reveal,
    card_code,
    commit,
    commitment_text,
    dealt_cards,
    deck_problem,
    deck_text,
    format_reveal,
    grouped,
    parse_deck_text,
    parse_reveals,
    short,
    verify,
)
from engine.errors import ParseError

SALT = bytes(range(SALT_BYTES))


def shuffled(size: int, seed: int = 7) -> tuple[Card, ...]:
    order = list(deck_cards(size))
    random.Random(seed).shuffle(order)
    return tuple(order)


def swap(deck: tuple[Card, ...], i: int, j: int) -> tuple[Card, ...]:
    cards = list(deck)
    cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


# --- deck text ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [24, 36, 52])
def test_deck_text_round_trips_for_every_deck_size(size: int) -> None:
    for seed in range(20):
        deck = shuffled(size, seed)
        text = deck_text(deck)
        assert len(text) == 2 * size
        assert text.isascii() and text.isalnum()
        assert parse_deck_text(text) == deck


def test_card_codes_are_the_engines_own_notation() -> None:
    assert card_code(Card.parse("10♥")) == "Th"
    assert card_code(Card.parse("6♠")) == "6s"
    for card in CARDS:
        assert Card.parse(card_code(card)) == card


@pytest.mark.parametrize("text", ["Th6", "TH6s", "10h6s", "6s6♠", "Xs"])
def test_a_deck_text_that_is_not_canonical_is_refused(text: str) -> None:
    with pytest.raises(ParseError):
        parse_deck_text(text)


# --- commitment --------------------------------------------------------------------------


def test_the_commitment_is_sha256_over_the_documented_bytes() -> None:
    deck = shuffled(24)
    assert commitment_text(SALT, deck) == (
        b"durak-deal-v1\n" + SALT.hex().encode() + b"\n" + deck_text(deck).encode()
    )
    assert len(commit(SALT, deck)) == 64
    assert commit(SALT, deck) == commit(SALT, list(deck))  # deterministic, any sequence
    assert short(commit(SALT, deck)) == commit(SALT, deck)[:SHORT_HEX]


def test_the_commitment_changes_with_one_swapped_card_and_with_the_salt() -> None:
    deck = shuffled(36)
    base = commit(SALT, deck)
    assert commit(SALT, swap(deck, 0, 1)) != base
    assert commit(SALT, swap(deck, 34, 35)) != base  # the bottom of the stock too
    other_salt = bytes([1]) + SALT[1:]
    assert commit(other_salt, deck) != base
    assert short(commit(SALT, swap(deck, 17, 18))) != short(base)


def test_a_short_salt_is_refused() -> None:
    with pytest.raises(ValueError):
        commit(b"\x00" * (SALT_BYTES - 1), shuffled(36))


def test_the_documented_shell_recipe_gives_the_same_code() -> None:
    if shutil.which("sha256sum") is None:
        pytest.skip("coreutils' sha256sum is not installed")
    deck = shuffled(52)
    recipe = (
        f"printf 'durak-deal-v1\\n%s\\n%s' '{SALT.hex()}' '{deck_text(deck)}' "
        f"| sha256sum | cut -c1-{SHORT_HEX}"
    )
    out = subprocess.run(["sh", "-c", recipe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == short(commit(SALT, deck))


# --- reveal: format and parse ------------------------------------------------------------


def test_a_reveal_is_one_short_html_safe_line() -> None:
    token = format_reveal(SALT, shuffled(52), 6)
    assert token.startswith("🔐 deal v1 p6 ")
    assert "\n" not in token and not set(token) & set("<>&\"'")
    assert len(token) < 200
    assert token.removeprefix("🔐 ").isascii()


def test_format_refuses_a_deal_that_would_not_verify() -> None:
    with pytest.raises(ValueError):
        format_reveal(SALT, shuffled(36)[:-1], 3)
    with pytest.raises(ValueError):
        format_reveal(SALT, shuffled(24), 5)  # 24 cards deal to at most 4 players


SURROUNDINGS = [
    "🏁 <b>Game over!</b> 🃏 Durak: Alice 😅\n{token}\nPlay again tomorrow?",
    "Fin de la partida. Durak: Bob 🤡 — {token} — ¡otra vez!",
    "Spiel vorbei, Durak: Carla.\n\n{token}\n👏 Nochmal?",
    "Fim de jogo 🎴 durak: Dani ({token}).",
    "Игра окончена! Дурак — Ёжик 🦔\n<code>{token}</code>\nЕщё партию?",
    "Гру завершено. Дурень: Їжак.{token}🎉",
]


@pytest.mark.parametrize("surrounding", SURROUNDINGS)
def test_parse_finds_the_reveal_inside_a_localized_message(surrounding: str) -> None:
    deck = shuffled(36)
    token = format_reveal(SALT, deck, 3)
    found = parse_reveals(surrounding.format(token=token))
    assert found == parse_reveals(token)
    assert len(found) == 1
    assert verify(found[0]).ok
    assert verify(found[0]).deck == deck


def test_parse_finds_every_game_of_a_series_and_survives_a_lost_emoji() -> None:
    tokens = [format_reveal(SALT, shuffled(size, size), 2) for size in (24, 36, 52)]
    message = "Series over! 🏆\n" + "\n".join(f"Game {i}: {t}" for i, t in enumerate(tokens, 1))
    message = message.replace("🔐 ", "", 1)  # a copy may drop the emoji
    found = parse_reveals(message)
    assert [str(reveal) for reveal in found] == tokens
    assert all(verify(reveal).ok for reveal in found)


def test_parse_reads_no_sentence_as_a_reveal() -> None:
    assert parse_reveals("New deal! 🔐 The deal v1 of the rules is out.") == []
    assert parse_reveals("") == []


def test_parse_accepts_the_spaces_a_chat_client_may_substitute() -> None:
    token = format_reveal(SALT, shuffled(24), 4)
    assert parse_reveals(token.replace(" ", "\u00a0")) == parse_reveals(token)


# --- verify ------------------------------------------------------------------------------


def reveal_of(deck: tuple[Card, ...], players: int = 3, salt: bytes = SALT) -> Reveal:
    return parse_reveals(format_reveal(salt, deck, players))[0]


def test_a_reveal_whose_code_does_not_match_the_deck_is_rejected() -> None:
    good = reveal_of(shuffled(36))
    tampered = Reveal(
        good.version, good.players, good.salt_hex, deck_text(swap(shuffled(36), 0, 20)), good.short
    )
    checked = verify(tampered)
    assert not checked.ok
    assert "commitment mismatch" in checked.reason
    assert checked.commitment is not None and short(checked.commitment) != good.short
    other_salt = Reveal(good.version, good.players, "ff" * 16, good.deck_text, good.short)
    assert "commitment mismatch" in verify(other_salt).reason


@pytest.mark.parametrize(
    ("deck", "why"),
    [
        ((*shuffled(36)[:-1], shuffled(36)[0]), "appears twice"),
        (shuffled(36)[:-1], "has 35"),
        ((*shuffled(36), Card.parse("5♥")), "has 37"),
        ((*shuffled(24)[:-1], Card.parse("2♣")), "is not in a 24-card deck"),
    ],
)
def test_an_invalid_deck_is_rejected_with_a_reason(deck: tuple[Card, ...], why: str) -> None:
    assert why in (deck_problem(deck) or "")
    # Committed honestly, so only the deck itself is wrong.
    reveal = Reveal(1, 2, SALT.hex(), deck_text(deck), short(commit(SALT, deck)))
    checked = verify(reveal)
    assert not checked.ok
    assert why in checked.reason
    assert "commitment mismatch" not in checked.reason


def test_verify_names_each_damaged_field() -> None:
    good = reveal_of(shuffled(24), 4)
    fields = (good.version, good.players, good.salt_hex, good.deck_text, good.short)
    assert "v2" in verify(Reveal(2, *fields[1:])).reason
    assert "salt" in verify(Reveal(*fields[:2], "abc", *fields[3:])).reason
    assert "salt: 8 bytes" in verify(Reveal(*fields[:2], "ab" * 8, *fields[3:])).reason
    assert "Zz" in verify(Reveal(*fields[:3], "Zz" + good.deck_text[2:], good.short)).reason
    assert "players" in verify(Reveal(1, 5, *fields[2:])).reason


def test_verify_shows_what_the_table_saw() -> None:
    deck = shuffled(36, 3)
    state = new_game(Rules(), 3, deck=deck, dealer=1)
    checked = verify(reveal_of(deck, 3))
    assert checked.dealt is not None
    assert checked.dealt.trump_card == state.trump_card == deck[18]
    # Hands from the dealer's left neighbour (seat 2 here) clockwise, the dealer last.
    for offset, hand in enumerate(checked.dealt.hands, 1):
        seat = (1 + offset) % 3
        assert sorted(hand) == [card for card in CARDS if state.hands[seat] >> card & 1]
    assert checked.dealt.stock == 18


def test_dealt_cards_when_the_deal_uses_the_whole_deck() -> None:
    deck = shuffled(24)
    dealt = dealt_cards(deck, 4)
    assert dealt.trump_card == deck[-1]  # the dealer shows their last card
    assert dealt.trump_card in dealt.hands[-1]
    assert dealt.stock == 0


def test_grouped_is_for_the_eye() -> None:
    assert grouped("0123456789abcdef") == "0123 4567 89ab cdef"


# --- the durak-verify script -------------------------------------------------------------


def result_message(*decks: tuple[Card, ...]) -> str:
    lines = [format_reveal(SALT, deck, 2) for deck in decks]
    return "Игра окончена! 🃏 Дурак: Боб\n" + "\n".join(lines) + "\n🔁 Play again tomorrow"


def test_the_script_accepts_a_good_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert verify_main(["--text", result_message(shuffled(36), shuffled(24))]) == 0
    out = capsys.readouterr().out
    assert out.count(": OK") == 2
    assert "trump card" in out and "All 2 deal(s) verify" in out


def test_the_script_rejects_a_tampered_message(capsys: pytest.CaptureFixture[str]) -> None:
    deck = shuffled(36)
    message = result_message(shuffled(52), deck)
    tampered = message.replace(deck_text(deck), deck_text(swap(deck, 3, 30)))
    assert tampered != message
    assert verify_main(["--text", tampered]) == 1
    out = capsys.readouterr().out
    assert "Game 1: OK" in out and "Game 2: MISMATCH: commitment mismatch" in out


def test_the_script_reads_a_file_and_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    message = result_message(shuffled(52))
    path = tmp_path / "result.txt"
    path.write_text(message, encoding="utf-8")
    assert verify_main([str(path)]) == 0
    monkeypatch.setattr("sys.stdin", _FakeStdin(message))
    assert verify_main([]) == 0
    assert verify_main([str(tmp_path / "missing.txt")]) == 2
    capsys.readouterr()


def test_the_script_fails_without_a_reveal(capsys: pytest.CaptureFixture[str]) -> None:
    assert verify_main(["--text", "Game over! Durak: Alice"]) == 2
    assert "No deal reveal found" in capsys.readouterr().err


def test_the_script_checks_a_code_noted_before_the_deal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    deck = shuffled(36)
    message = result_message(deck)
    code = grouped(short(commit(SALT, deck)))
    assert verify_main(["--text", message, "--shown", code.upper()]) == 0
    assert verify_main(["--text", message, "--shown", "0" * SHORT_HEX]) == 1
    assert verify_main(["--text", message, "--shown", "abcd"]) == 1
    capsys.readouterr()


class _FakeStdin:
    def __init__(self, text: str) -> None:
        self._text = text

    def isatty(self) -> bool:
        return False

    def read(self) -> str:
        return self._text


# --- the secret deal ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [24, 36, 52])
def test_a_secret_deal_is_a_whole_deck_with_a_fresh_salt(size: int) -> None:
    deals = [new_secret_deal(size) for _ in range(5)]
    for salt, deck in deals:
        assert len(salt) >= SALT_BYTES
        assert sorted(deck) == list(deck_cards(size))
        assert deck_problem(deck) is None
        assert verify(reveal_of(deck, 2, salt)).ok
    assert len({salt for salt, _ in deals}) == len(deals)
    assert len({deck for _, deck in deals}) == len(deals)  # 24! orders: never twice


def test_a_secret_deal_refuses_an_unknown_deck_size() -> None:
    with pytest.raises(ValueError):
        new_secret_deal(32)
