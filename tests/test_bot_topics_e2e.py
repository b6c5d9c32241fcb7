"""Games per forum topic, end to end: the real PTB application against the emulator.

A forum supergroup with two topics runs a game in each at once; every message of a game
goes into its topic (none into General), commands are answered in the topic they were
asked in, and private messages name the group and the topic. A topic closed mid-game ends
that game cleanly while the other topic's game carries on. (A group without topics is
covered by the rest of the bot's tests, unchanged.)
"""

from __future__ import annotations

import asyncio
import datetime as dtm
import time
from typing import Any

import pytest
from support.harness import Harness, hand_buttons, play_out, press, pressable
from telegram import CallbackQuery, Chat, ForumTopicCreated, Message, Update, User

from bot.domain.place import Place
from bot.telegram.common import place_of, topic_name
from sandbox.emulator import EmuMessage

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100700
ANN, BOB, CAROL = 21, 22, 23
NAMES = {ANN: "Ann", BOB: "Bob", CAROL: "Carol"}
GONE = {"en": "can no longer write there", "de": "kann dort nicht mehr schreiben"}
"""From the private message that says a game ended because its place refuses messages."""


# --- place_of: which place an update is in --------------------------------------------------

NOW = dtm.datetime(2026, 1, 1, tzinfo=dtm.UTC)
ANNA = User(1, "Anna", False)
FORUM = Chat(-100, Chat.SUPERGROUP, title="Durak club", is_forum=True)


def message(
    chat: Chat, thread: int | None = None, *, topic: bool = False, reply: Message | None = None
) -> Message:
    return Message(
        5,
        NOW,
        chat,
        from_user=ANNA,
        text="/newgame",
        message_thread_id=thread,
        is_topic_message=topic or None,
        reply_to_message=reply,
    )


def test_place_of_reads_the_forum_topic_of_a_message_or_a_tapped_message() -> None:
    created = Message(7, NOW, FORUM, forum_topic_created=ForumTopicCreated("Cards", 7322096))
    in_topic = Update(1, message=message(FORUM, 7, topic=True, reply=created))
    assert place_of(in_topic) == Place(-100, 7)
    assert topic_name(in_topic) == "Cards"
    # General: messages there carry no thread; the chat's place.
    general = Update(2, message=message(FORUM))
    assert place_of(general) == Place(-100) and topic_name(general) == ""
    # A tap on a message in a topic is in that topic.
    query = CallbackQuery("q", ANNA, "i", message=message(FORUM, 7, topic=True), data="x")
    assert place_of(Update(3, callback_query=query)) == Place(-100, 7)
    # An explicit reply in a topic: the topic is known, its name is not.
    replied = message(FORUM, 7, topic=True)
    answer = Update(4, message=message(FORUM, 7, topic=True, reply=replied))
    assert place_of(answer) == Place(-100, 7) and topic_name(answer) == ""


def test_place_of_a_reply_thread_without_topics_is_the_chat() -> None:
    group = Chat(-200, Chat.SUPERGROUP, title="Plain")
    assert place_of(Update(1, message=message(group, 9))) == Place(-200)  # no topic
    private = Chat(1, Chat.PRIVATE, first_name="Anna")
    assert place_of(Update(2, message=message(private))) == Place(1)


# --- end to end -----------------------------------------------------------------------------


def forum(h: Harness, *users: int, german: tuple[int, ...] = ()) -> tuple[int, int]:
    """The forum group "Durak club" with topics "Cards" and "Tournament" (their ids)."""
    for uid in users:
        h.emu.add_user(uid, NAMES[uid], language_code="de" if uid in german else "en")
    h.emu.add_group(GROUP, "Durak club", members=list(users), creator=users[0], forum=True)
    cards = h.emu.admin_creates_topic(users[0], GROUP, "Cards").id
    tournament = h.emu.admin_creates_topic(users[0], GROUP, "Tournament").id
    return cards, tournament


async def open_dms(h: Harness, *users: int) -> None:
    for uid in users:
        await h.emu.user_starts_bot(uid)
        await h.emu.wait_for(lambda u=uid: private_texts(h, u) or None, 5, what="a greeting")


def bot_messages(h: Harness) -> list[EmuMessage]:
    return [m for m in h.emu.messages(GROUP) if m.from_bot]


async def wait_in(h: Harness, topic: int, text: str) -> EmuMessage:
    """The bot's latest message in ``topic`` that contains ``text``, once there is one."""

    def find() -> EmuMessage | None:
        for m in reversed(bot_messages(h)):
            if m.thread_id == topic and text in m.text:
                return m
        return None

    return await h.emu.wait_for(find, 5, what=f"{text!r} in topic {topic}")


async def reply_after(h: Harness, topic: int, asked: int) -> EmuMessage:
    """The bot's first message in ``topic`` after message ``asked`` (a command's answer)."""

    def find() -> EmuMessage | None:
        return next(
            (m for m in bot_messages(h) if m.thread_id == topic and m.message_id > asked), None
        )

    return await h.emu.wait_for(find, 5, what=f"an answer in topic {topic}")


async def started_game(h: Harness, topic: int, creator: int, joiners: tuple[int, ...] = ()) -> int:
    """/newgame in ``topic``, the joiners and an Easy computer seated, Start; the lobby's id."""
    await h.emu.user_sends(creator, GROUP, "/newgame", message_thread_id=topic)
    lobby = await wait_in(h, topic, "new game")
    for uid in joiners:
        await press(h, uid, GROUP, lobby.message_id, text="Join")
    await press(h, creator, GROUP, lobby.message_id, text="+ AI Easy")
    await wait_in(h, topic, "🤖 Vera · Easy")
    await press(h, creator, GROUP, lobby.message_id, text="Start")
    await wait_in(h, topic, "Trump:")
    return lobby.message_id


def private_texts(h: Harness, user: int) -> list[str]:
    return [m.text for m in h.emu.messages(user) if m.from_bot]


async def test_two_topics_play_at_once_each_in_its_own_topic(make_harness: Any) -> None:
    async with make_harness() as h:
        cards, tournament = forum(h, ANN, BOB, CAROL)
        await h.start_bot()
        await open_dms(h, ANN, BOB)
        lobby_a = await started_game(h, cards, ANN)
        lobby_b = await started_game(h, tournament, BOB)
        storage = h.games.storage
        a = await storage.load_table(Place(GROUP, cards))
        b = await storage.load_table(Place(GROUP, tournament))
        assert a is not None and b is not None and a.game_id != b.game_id
        assert (a.phase, b.phase) == ("playing", "playing")  # at the same time
        assert (a.topic_name, b.topic_name) == ("Cards", "Tournament")
        assert (a.table_message_id, b.table_message_id) == (lobby_a, lobby_b)
        assert await storage.load_table(Place(GROUP)) is None  # General has no game

        result_a, result_b = await asyncio.gather(
            play_out(h, GROUP, [ANN], topic=cards), play_out(h, GROUP, [BOB], topic=tournament)
        )
        assert (result_a.thread_id, result_b.thread_id) == (cards, tournament)

        # Private messages name the group and the topic of their own game.
        assert any("Durak club › Cards" in t for t in private_texts(h, ANN))
        assert any("Durak club › Tournament" in t for t in private_texts(h, BOB))
        assert not any("Tournament" in t for t in private_texts(h, ANN))

        # Commands are answered in the topic they were asked in; the totals are the group's.
        await h.emu.user_sends(ANN, GROUP, "/stats", message_thread_id=cards)
        stats = await wait_in(h, cards, "Statistics")
        assert "Ann" in stats.text and "Bob" in stats.text
        await h.emu.user_sends(CAROL, GROUP, "/rules", message_thread_id=tournament)
        await wait_in(h, tournament, "Durak in brief")  # Carol's private chat is shut
        await h.emu.user_sends(ANN, GROUP, "/rules", message_thread_id=cards)
        await wait_in(h, cards, "I sent you the rules")
        for command, topic, text in (
            ("/help", tournament, "commands:"),
            ("/settings", tournament, "Settings of this group"),
            ("/language", cards, "Choose the language"),
            ("/top", cards, ""),
        ):
            asked = await h.emu.user_sends(BOB, GROUP, command, message_thread_id=topic)
            answer = await reply_after(h, topic, asked.message_id)
            assert text in answer.text, (command, answer.text)

        # A rematch opens its lobby in the same topic.
        await press(h, ANN, GROUP, result_a.message_id, text="Rematch")
        await h.settle()
        rematch = await storage.load_table(Place(GROUP, cards))
        assert rematch is not None and rematch.phase == "lobby" and rematch.game_id != a.game_id
        assert rematch.lobby_message_id is not None
        lobby = h.emu.message(GROUP, rematch.lobby_message_id)
        assert lobby is not None and lobby.thread_id == cards

        sent = bot_messages(h)
        assert {m.thread_id for m in sent} == {cards, tournament}  # none in General
        assert sum(m.thread_id == cards for m in sent) >= 4  # table, code, result, replies


def hand_with(h: Harness, user: int, text: str) -> EmuMessage | None:
    """The user's latest hand message with a button reading ``text``."""
    for m in reversed(h.emu.messages(user)):
        if m.from_bot and any(b.get("text") == text for row in m.inline_keyboard for b in row):
            return m
    return None


async def test_a_closed_topic_ends_its_game_while_the_other_topic_plays_on(
    make_harness: Any,
) -> None:
    async with make_harness() as h:
        cards, tournament = forum(h, ANN, BOB, CAROL, german=(BOB,))
        await h.start_bot()
        await open_dms(h, ANN, BOB, CAROL)
        await started_game(h, cards, ANN, (BOB,))
        await started_game(h, tournament, CAROL)
        place = Place(GROUP, cards)
        storage = h.games.storage
        game = await storage.load_table(place)
        assert game is not None and game.phase == "playing"

        hand = await h.emu.wait_for(lambda: hand_with(h, ANN, "Leave game"), 5, what="a hand")
        h.emu.admin_closes_topic(ANN, GROUP, cards)
        refused_before = h.emu.stats.errors[400]
        # Ann leaves: the group must be told, and the closed topic refuses the message.
        await press(h, ANN, ANN, hand.message_id, text="Leave game")
        confirm = await h.emu.wait_for(lambda: hand_with(h, ANN, "Yes, leave"), 5, what="confirm")
        await press(h, ANN, ANN, confirm.message_id, text="Yes, leave")

        def told(user: int, lang: str) -> str | None:
            return next((t for t in private_texts(h, user) if GONE[lang] in t), None)

        # Each player is told in a new private message, in their own language.
        for user, lang in ((ANN, "en"), (BOB, "de")):
            text = await h.emu.wait_for(
                lambda u=user, lang=lang: told(u, lang), 5, what=f"{NAMES[user]} told"
            )
            assert "Durak club › Cards" in text
        await h.settle()

        ended = await storage.load_table(place)
        assert ended is not None and ended.game_id == game.game_id and ended.phase == "cancelled"
        assert (ended.turn_deadline, ended.ai_due, ended.reminder_due) == (None, None, None)
        assert (await storage.owed_output(place)).complete  # nothing left owed
        assert place not in await storage.running_places()
        due = await storage.timers_due_by(time.time() + 10**6, limit=1000)
        assert place not in [p for _, p, _ in due]  # its timer is gone
        assert hand_buttons(h.emu, BOB) == []  # no move buttons left in the game that ended
        # One refusal, no retry storm (the outbox is idle, nothing is queued to try again).
        assert 1 <= h.emu.stats.errors[400] - refused_before <= 2
        assert not any(lane.jobs for lane in h.games.box.lanes.values())
        assert [line.user_id for line in await storage.chat_stats(GROUP)] == []  # not counted

        # The other topic's game carries on to its end, in its topic.
        result = await play_out(h, GROUP, [CAROL], topic=tournament)
        assert result.thread_id == tournament
        assert all(m.thread_id in (cards, tournament) for m in bot_messages(h))
        assert [line.user_id for line in await storage.chat_stats(GROUP)] == [CAROL]


async def test_a_deleted_topic_ends_its_game_at_the_next_move(make_harness: Any) -> None:
    """Deleting a topic deletes its messages: the table's edit finds no message, and the
    new one is refused ("message thread not found"). The game ends; General stays quiet."""
    async with make_harness() as h:
        cards, _ = forum(h, ANN)
        await h.start_bot()
        await open_dms(h, ANN)
        await started_game(h, cards, ANN)
        place = Place(GROUP, cards)

        def moves() -> list[tuple[int, int, str]] | None:
            """Ann's buttons for the step her newest hand was shown at (once it was)."""
            shown = h.games.box.shown.get((place, ANN))
            if shown is None:
                return None
            moving = [b for b in pressable(h, ANN, shown[1]) if b[2].split(":")[4][0] in "pBabt"]
            return moving or None  # a move of the game, not "Leave"

        buttons = await h.emu.wait_for(moves, 5, what="Ann's moves")
        h.emu.admin_deletes_topic(ANN, GROUP, cards)
        _, mid, data = buttons[0]
        await h.emu.user_presses(ANN, ANN, mid, data=data)
        await h.emu.wait_for(
            lambda: next((t for t in private_texts(h, ANN) if GONE["en"] in t), None),
            5,
            what="Ann told",
        )
        await h.settle()
        ended = await h.games.storage.load_table(place)
        assert ended is not None and ended.phase == "cancelled"
        assert (await h.games.storage.owed_output(place)).complete
        assert bot_messages(h) == []  # the topic's messages went with it; none in General


async def test_a_renamed_topic_is_named_anew_in_private(make_harness: Any) -> None:
    async with make_harness() as h:
        cards, _ = forum(h, ANN)
        await h.start_bot()
        await open_dms(h, ANN)
        await started_game(h, cards, ANN)
        await h.emu.wait_for(
            lambda: any("Durak club › Cards" in t for t in private_texts(h, ANN)), 5, what="hand"
        )
        h.emu.admin_edits_topic(ANN, GROUP, cards, name="Big table")
        await h.emu.wait_for(
            lambda: any("Durak club › Big table" in t for t in private_texts(h, ANN)),
            5,
            what="the hand naming the new name",
        )
        game = await h.games.storage.load_table(Place(GROUP, cards))
        assert game is not None and game.topic_name == "Big table" and game.phase == "playing"
