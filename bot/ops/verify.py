"""``durak-verify``: check the deals of a game from its result message alone.

Give it the result message (a file, ``--text`` or standard input, copied from the chat
as it is, in any language): it finds every reveal token (``🔐 deal v1 …``), recomputes
each commitment and prints a verdict per game with the commitment, the trump card, the
hands and the deck, for comparing with the code the table showed before the deal and
with what people saw. ``--shown CODE`` also checks a code noted from that earlier message.

Exit status: 0 when at least one reveal was found and every one verifies (and every
``--shown`` code matches one of them), 1 when something does not verify, 2 when no reveal
was found or the input could not be read.

It imports only ``engine`` (and so pydantic), not Telegram, Redis or the rest of ``bot``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.cards import Card
from engine.commitment import SHORT_HEX, DealtCards, VerifyResult, grouped, parse_reveals, verify

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_NOTHING_FOUND = 2


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    text = _read_message(args.file, args.text)
    if text is None:
        return EXIT_NOTHING_FOUND
    reveals = parse_reveals(text)
    if not reveals:
        print(
            "No deal reveal found (a line like '🔐 deal v1 p3 …'): paste the whole result message.",
            file=sys.stderr,
        )
        return EXIT_NOTHING_FOUND
    results = [verify(reveal) for reveal in reveals]
    for number, checked in enumerate(results, 1):
        print(_report(number, checked))
    shown_ok = _check_shown(args.shown, results)
    failed = sum(not checked.ok for checked in results)
    if failed or not shown_ok:
        print(f"NOT VERIFIED: {failed} of {len(results)} deal(s) failed.")
        return EXIT_MISMATCH
    print(
        f"All {len(results)} deal(s) verify. Compare each code with the one the table showed "
        "before the first card was dealt: only that proves the deck was fixed in advance."
    )
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="durak-verify",
        description="Check the deals of a Durak game from its result message.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "file", nargs="?", help="a file holding the result message ('-' or none: stdin)"
    )
    source.add_argument("--text", help="the result message itself")
    parser.add_argument(
        "--shown",
        action="append",
        default=[],
        metavar="CODE",
        help="a code the table showed before a deal; it must match one of the reveals "
        "(spaces are ignored; may be given once per game)",
    )
    return parser


def _read_message(path: str | None, text: str | None) -> str | None:
    """The message text, or None (with the reason on stderr) if it cannot be read."""
    if text is not None:
        return text
    if path is None or path == "-":
        if sys.stdin.isatty():
            print("Paste the result message, then press Ctrl-D.", file=sys.stderr)
        return sys.stdin.read()
    try:
        # Undecodable bytes can only be in the text around a token, which is ASCII.
        with open(path, encoding="utf-8", errors="replace") as message:
            return message.read()
    except OSError as error:
        print(f"Cannot read {path}: {error.strerror}", file=sys.stderr)
        return None


def _report(number: int, checked: VerifyResult) -> str:
    reveal = checked.reveal
    verdict = "OK" if checked.ok else f"MISMATCH: {checked.reason}"
    lines = [f"Game {number}: {verdict}"]
    lines.append(f"  code in the message:  {grouped(reveal.short)}")
    if checked.commitment is not None:
        lines.append(f"  commitment (SHA-256): {checked.commitment}")
    if checked.dealt is not None:
        lines.extend(_dealt_lines(checked.dealt))
    if checked.deck is not None:
        lines.append(f"  deck, in deal order:  {_cards(checked.deck)}")
    return "\n".join(lines)


def _dealt_lines(dealt: DealtCards) -> list[str]:
    lines = [f"  players: {dealt.players}, trump card: {dealt.trump_card}"]
    for seat, hand in enumerate(dealt.hands, 1):
        lines.append(f"  first hand, {_seat_name(seat, dealt.players) + ':':<25} {_cards(hand)}")
    lines.append(f"  stock after the deal: {dealt.stock} card(s), the trump card last")
    return lines


def _seat_name(seat: int, players: int) -> str:
    """Seats counted from the dealer, the one thing every player knows about the deal."""
    if seat == players:
        return "the dealer"
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(seat, f"{seat}th")
    return f"{ordinal} to the dealer's left"


def _cards(cards: Sequence[Card]) -> str:
    return " ".join(str(card) for card in cards)


def _check_shown(codes: Sequence[str], results: Sequence[VerifyResult]) -> bool:
    """Whether every code noted from a pre-deal message is the code of a verified reveal."""
    verified = {checked.reveal.short for checked in results if checked.ok}
    all_found = True
    for code in codes:
        normal = "".join(code.split()).lower()
        if len(normal) != SHORT_HEX:
            print(f"--shown {code!r}: a code has {SHORT_HEX} characters, not {len(normal)}")
            all_found = False
        elif normal not in verified:
            print(f"--shown {grouped(normal)}: MISMATCH, no verified deal has this code")
            all_found = False
        else:
            print(f"--shown {grouped(normal)}: matches")
    return all_found


if __name__ == "__main__":
    sys.exit(main())
