"""Ratings shown to people, end to end (the real PTB application, the emulator, Redis):
each human's private result with their rating change, /top with its minimum of games
and its board over all groups, /stats with first places and the asker's rating, and a
group that does not rate its games."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from support.harness import Harness, play_out, press

from bot.domain.place import Place
from bot.domain.rating import DEFAULT_MU, RatingRecord
from bot.domain.records import LeaderboardLine
from bot.render.labels import too_wide
from bot.render.rating import Board, number, season_name, signed, top_message, with_chart_button
from bot.store.keys import user_rating_key
from bot.store.rating_codec import record_to_json
from bot.store.storage import season_at
from locales import SUPPORTED, translator
from sandbox.emulator import BotApiEmulator, EmuMessage

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100700
ANN, BOB = 31, 32
RESULT = "🏁"
RATING_LINE = re.compile(
    r"📈 (\w+) ([\d.,\u00a0\u202f ]+) → ([\d.,\u00a0\u202f ]+) \(([+−±]\d[\d.,]*)\)"
)


def scene(h: Harness, *, bob_lang: str = "en") -> None:
    h.emu.add_user(ANN, "Ann")
    h.emu.add_user(BOB, "Bob", language_code=bob_lang)
    h.emu.add_group(GROUP, "Rating Club", members=[ANN, BOB], creator=ANN)


async def open_dms(h: Harness, *users: int) -> None:
    for uid in users:
        await h.emu.user_starts_bot(uid)
        await h.emu.wait_for(lambda uid=uid: any(m.from_bot for m in h.emu.messages(uid)))


def last_id(h: Harness, chat: int) -> int:
    return max((m.message_id for m in h.emu.messages(chat, include_deleted=True)), default=0)


async def new_message(h: Harness, chat: int, mark: int, text: str) -> EmuMessage:
    """The first bot message after ``mark`` in ``chat`` that contains ``text``."""

    def find() -> EmuMessage | None:
        for m in h.emu.messages(chat):
            if m.from_bot and m.message_id > mark and text in m.text:
                return m
        return None

    return await h.emu.wait_for(find, 10, what=f"{text!r} in {chat}")


class _After:
    """The emulator as ``play_out`` sees it: the group's messages after ``mark`` only, so
    an earlier game's result does not count as this game's end."""

    def __init__(self, emu: BotApiEmulator, group: int, mark: int) -> None:
        self._emu, self._group, self._mark = emu, group, mark

    def messages(self, chat_id: int, **kwargs: Any) -> list[EmuMessage]:
        found = self._emu.messages(chat_id, **kwargs)
        return [m for m in found if chat_id != self._group or m.message_id > self._mark]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._emu, name)


@dataclass
class _View:
    emu: Any
    bots: list[Any]


def labels_of(h: Harness, chat: int, message_id: int) -> list[str]:
    message = h.emu.message(chat, message_id)
    return [] if message is None else [b["text"] for row in message.buttons for b in row]


async def quick_game(h: Harness, humans: list[int], ais: tuple[str, ...] = ("Easy",)) -> str:
    """A 24-card game in the group, played to its end by pressing buttons; its game id."""
    mark = last_id(h, GROUP)
    await h.emu.user_sends(humans[0], GROUP, "/newgame")
    lobby = await new_message(h, GROUP, mark, "new game")
    for uid in humans[1:]:
        await press(h, uid, GROUP, lobby.message_id, text="Join")
    for level in ais:
        await press(h, humans[0], GROUP, lobby.message_id, text=f"+ AI {level}")
    # The deck goes round 36 → 52 → 24; a group's next lobby keeps the last one.
    for deck in ("Deck: 36", "Deck: 52"):
        if deck in labels_of(h, GROUP, lobby.message_id):
            await press(h, humans[0], GROUP, lobby.message_id, text=deck)
            await h.emu.wait_for(
                lambda deck=deck: deck not in labels_of(h, GROUP, lobby.message_id)
            )
    await press(h, humans[0], GROUP, lobby.message_id, text="Start")
    await play_out(_View(_After(h.emu, GROUP, mark), h.bots), GROUP, humans)  # type: ignore[arg-type]
    await h.settle()
    return (await h.table(GROUP)).game_id


def result_of(h: Harness, user: int) -> EmuMessage:
    """The user's private result of the latest game."""
    found = [m for m in h.emu.messages(user) if m.from_bot and RESULT in m.text]
    assert found, f"no result in {user}'s private chat"
    return found[-1]


def versions(h: Harness, chat: int, message_id: int) -> list[dict[str, Any]]:
    """Every version of one bot message: as sent, then after each edit."""
    return [
        e["message"]
        for e in h.emu.chat_events(chat)
        if e["type"] in ("message", "edit") and e["message"]["message_id"] == message_id
    ]


async def established(h: Harness, user: int, mu: float) -> RatingRecord:
    """Give ``user`` an established rating in the group this month (as 100 games would)."""
    record = RatingRecord(mu=mu, sigma=2.0, games=100, wins=50)
    key = user_rating_key(user, GROUP, season_at(h.clock()))
    await h.redis.set(key, record_to_json(record))
    return record


# --- the private result ------------------------------------------------------------------


async def test_each_human_sees_their_rating_change_in_their_own_number_format(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        scene(h, bob_lang="de")
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        ann_before = await established(h, ANN, DEFAULT_MU + 1)  # 1,530
        bob_before = await established(h, BOB, DEFAULT_MU + 2)  # 1.560
        assert (ann_before.display, bob_before.display) == (1530, 1560)
        game_id = await quick_game(h, [ANN, BOB], ais=())
        lines = await h.games.storage.rating_lines(Place(GROUP), game_id)
        season = season_at(h.clock())
        for user, before, lang, word in ((ANN, 1530, "en", "Rating"), (BOB, 1560, "de", "Wertung")):
            result = result_of(h, user)
            found = RATING_LINE.search(result.text)
            assert found is not None, result.text
            line = lines[user]
            tr = translator(lang)
            delta = (
                "±0" if line.delta == 0 else f"{'+' if line.delta > 0 else '−'}{abs(line.delta)}"
            )
            separator = "," if lang == "en" else "."
            assert found.group(1) == word
            assert found.group(2) == f"1{separator}{before % 1000:03d}"
            assert found.group(3) == f"{line.new // 1000}{separator}{line.new % 1000:03d}"
            assert found.group(4) == delta
            assert "provisional" not in result.text and "vorläufig" not in result.text
            # No game buttons and no table to open: the game is over; only its review.
            assert rows_of(result) == [["review"]]
            # The rating came with the result: no extra edit for it.
            first_result = next(
                v for v in versions(h, user, result.message_id) if RESULT in v["text"]
            )
            assert "📈" in first_result["text"]
            record = await h.games.storage.user_rating(user, GROUP, season)
            assert (record.games, record.display) == (101, line.new)
            assert tr.lang == lang


async def test_a_game_against_computers_moves_the_rating(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await open_dms(h, ANN)
        game_id = await quick_game(h, [ANN], ais=("Easy",))
        [(user, line)] = (await h.games.storage.rating_lines(Place(GROUP), game_id)).items()
        assert user == ANN and line.old == RatingRecord().display == 930
        assert line.new != line.old
        text = result_of(h, ANN).text
        sign = "+" if line.delta > 0 else "−"
        assert f"📈 Rating 930 → {line.new:,} ({sign}{abs(line.delta)})" in text
        # One game of five: provisional.
        assert "provisional until 5 games" in text
        season = season_at(h.clock())
        overall = await h.games.storage.user_rating(ANN, None, season)
        assert overall.games == 1 and overall.display == line.new
        [entry] = await h.games.storage.rating_history(ANN, 10)
        assert (entry.before, entry.after) == (930, line.new)


async def test_a_result_rendered_before_the_rating_settles_the_game_itself(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finished hand may be rendered before the game's end is rated (a job already
    running, or a worker taking over a dead one's output): it settles the game first."""
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await open_dms(h, ANN)
        storage = h.games.storage
        real = storage.settle_game_stats
        calls: list[str] = []

        async def late(chat_id: int, game_id: str) -> None:
            calls.append(game_id)
            if len(calls) > 1:  # the commit's own settling "has not happened yet"
                await real(chat_id, game_id)

        monkeypatch.setattr(storage, "settle_game_stats", late)
        game_id = await quick_game(h, [ANN], ais=("Easy",))
        assert calls[0] == game_id and len(calls) >= 2
        line = (await storage.rating_lines(Place(GROUP), game_id))[ANN]
        assert f"📈 Rating 930 → {line.new:,}" in result_of(h, ANN).text
        assert (await storage.user_rating(ANN, GROUP, season_at(h.clock()))).games == 1


# --- /top and /stats ---------------------------------------------------------------------


async def test_top_lists_players_after_enough_games(make_harness: Any) -> None:
    async with make_harness(rating_min_games=2) as h:
        scene(h)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        month = season_name(season_at(h.clock()), translator("en"))
        await quick_game(h, [ANN, BOB], ais=())

        # One game each: nobody is listed yet, and the reply says how to be.
        mark = last_id(h, GROUP)
        await h.emu.user_sends(BOB, GROUP, "/top")
        top = await new_message(h, GROUP, mark, "Best players")
        assert f"Best players · {month}" in top.text
        assert "Nobody is listed yet." in top.text
        assert "Play 2 games this month to be listed." in top.text
        assert [b["text"] for row in top.inline_keyboard for b in row] == ["🌍 All groups"]

        await quick_game(h, [ANN, BOB], ais=())
        mark = last_id(h, GROUP)
        await h.emu.user_sends(BOB, GROUP, "/top")
        top = await new_message(h, GROUP, mark, "Best players")
        rows = [line for line in top.text.splitlines() if re.match(r"\d\. ", line)]
        assert len(rows) == 2, top.text
        assert {row.split(" — ")[0][3:] for row in rows} == {"Ann", "Bob"}
        assert all("2 games" in row for row in rows)
        stored = await h.games.storage.top(GROUP, season_at(h.clock()), 2, 10)
        assert [
            f"{s.place}. {s.name} — {s.rating:,} · {s.games} games · {s.wins} win" for s in stored
        ] == [row.rstrip("s") for row in rows]
        assert "Play 2 games" in top.text  # the list is short of ten

        # The button: the board over all groups, as a new message.
        mark = last_id(h, GROUP)
        await press(h, ANN, GROUP, top.message_id, text="🌍 All groups")
        overall = await new_message(h, GROUP, mark, "Best players in all groups")
        assert len([ln for ln in overall.text.splitlines() if re.match(r"\d\. ", ln)]) == 2
        # So does "/top all", in one message and without a button.
        mark = last_id(h, GROUP)
        await h.emu.user_sends(BOB, GROUP, "/top all")
        typed = await new_message(h, GROUP, mark, "Best players in all groups")
        assert typed.text == overall.text and typed.inline_keyboard == []
        # In private, /top is the board over all groups.
        mark = last_id(h, ANN)
        await h.emu.user_sends(ANN, ANN, "/top")
        mine = await new_message(h, ANN, mark, "Best players in all groups")
        assert "Ann" in mine.text and "Bob" in mine.text

        # /stats: first places beside the durak counts, and the asker's rating line.
        mark = last_id(h, GROUP)
        await h.emu.user_sends(ANN, GROUP, "/stats")
        stats = await new_message(h, GROUP, mark, "Statistics")
        assert "Ann — 2 games · durak" in stats.text  # the existing line stays
        firsts = {line.name: line.first for line in await h.games.storage.chat_stats(GROUP)}
        for name, first in firsts.items():
            assert re.search(
                rf"{name} — 2 games · durak \d \(\d+%\) · first out {first}$", stats.text, re.M
            )
        record = await h.games.storage.user_rating(ANN, GROUP, season_at(h.clock()))
        assert f"📈 Rating of Ann, {month}: {record.display:,} · 2 games" in stats.text
        assert "provisional" not in stats.text
        mark = last_id(h, BOB)
        await h.emu.user_sends(BOB, BOB, "/stats")
        private = await new_message(h, BOB, mark, "Your games: 2")
        bob = await h.games.storage.user_rating(BOB, None, season_at(h.clock()))
        assert f"📈 Your rating in all groups, {month}: {bob.display:,} · 2 games" in private.text


async def test_a_group_with_rating_off_shows_no_rating(make_harness: Any) -> None:
    async with make_harness() as h:
        scene(h)
        await h.start_bot()
        await open_dms(h, ANN)
        settings = await h.games.storage.chat_settings(GROUP)
        settings.rating = False
        await h.games.storage.save_chat_settings(GROUP, settings)
        game_id = await quick_game(h, [ANN], ais=("Easy",))
        result = result_of(h, ANN)
        assert "📈" not in result.text and rows_of(result) == [["review"]]
        assert await h.games.storage.rating_lines(Place(GROUP), game_id) == {}
        mark = last_id(h, GROUP)
        await h.emu.user_sends(ANN, GROUP, "/stats")
        stats = await new_message(h, GROUP, mark, "Statistics")
        assert "Ann — 1 game" in stats.text and "📈" not in stats.text
        await h.emu.user_sends(ANN, GROUP, "/top")
        await new_message(h, GROUP, mark, "Games in this group are not rated.")


# --- labels ------------------------------------------------------------------------------


def test_rating_buttons_fit_a_phone_in_every_language() -> None:
    """Every keyboard the ratings add, as rendered, keeps the label rule of
    ``bot.render.labels`` in every language: /top's button in a group, the chart's under
    a private /top."""
    line = LeaderboardLine(1, ANN, "Ann", 1512, 7, 4)
    board = Board("2026-12", [line], 5, 10, overall=False)
    for lang in SUPPORTED:
        tr = translator(lang)
        group = top_message(board, tr, overall_button=True)
        private = with_chart_button(top_message(board, tr), "https://example.test/rating", tr)
        for rendered in (group, private):
            assert rendered.markup is not None
            rows = rendered.markup.inline_keyboard
            assert too_wide(rows) == [], (lang, rows)
        assert [b.text for row in group.markup.inline_keyboard for b in row] == [  # type: ignore[union-attr]
            tr.t("rating.button_overall")
        ]
        assert private.markup.inline_keyboard[-1][0].text == tr.t("rating.button_chart")  # type: ignore[union-attr]


def test_numbers_and_months_in_every_language() -> None:
    expected = {
        "en": ("1,512", "December 2026", "−8"),
        "de": ("1.512", "Dezember 2026", "−8"),
        "es": ("1.512", "diciembre de 2026", "−8"),
        "pt": ("1.512", "dezembro de 2026", "−8"),
        "ru": ("1\u00a0512", "декабрь 2026\u202fг.", "−8"),
        "uk": ("1\u00a0512", "грудень 2026\u202fр.", "−8"),
    }
    for lang, (shown, month, minus) in expected.items():
        tr = translator(lang)
        assert (number(1512, tr), season_name("2026-12", tr), signed(-8, tr)) == (
            shown,
            month,
            minus,
        ), lang
        assert signed(0, tr) == "±0" and signed(1234, tr) == "+" + number(1234, tr)


def rows_of(message: Any) -> list[list[str]]:
    """A message's buttons by what they do: the 🔍 Review button (op ``v``) in any
    language is "review"."""
    return [
        ["review" if str(b.get("callback_data", "")).endswith(":v") else b["text"] for b in row]
        for row in message.inline_keyboard
    ]
