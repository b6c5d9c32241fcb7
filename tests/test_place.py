"""One address for a game (``bot.domain.place.Place``): its text, and every spelling that
carries it (keys, index members, records, callback data, deep links, sends).

A place without a topic must be spelt exactly as the bare chat id was before places
existed: stored keys, records and the buttons already on people's screens depend on it.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import fakeredis
import pytest

from bot.domain import callbacks
from bot.domain.callbacks import CallbackError, HandButton, RulesButton
from bot.domain.place import Place, PlaceError, private_chat
from bot.domain.records import ChatGame, Seat
from bot.output.outbox import Outbox
from bot.render import Rendered
from bot.store import keys
from bot.store.migration import places_of
from bot.store.presence import open_key
from bot.store.storage import Owed, Storage, Write
from bot.telegram.common import place_of
from bot.transport.bot_api import message_params
from engine import Attack, Card, Take

CHAT = -1001234567890
LONGEST_CHAT = -(10**20 - 1)
"""More digits than any Telegram chat id has (its ids fit in 52 bits)."""
LONGEST_TOPIC = 9_999_999_999
GID = "ab12cd"


# --- the place itself -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("place", "text"),
    [
        (Place(CHAT), "-1001234567890"),
        (Place(CHAT, 7), "-1001234567890_7"),
        (Place(42), "42"),
        (Place(LONGEST_CHAT, LONGEST_TOPIC), f"{LONGEST_CHAT}_{LONGEST_TOPIC}"),
    ],
)
def test_a_place_and_its_text_round_trip(place: Place, text: str) -> None:
    assert place.text == str(place) == text
    assert Place.parse(text) == place


@pytest.mark.parametrize("text", ["", "abc", "-100_", "_7", "-100_0", "-100_-7", "1_2_3", "1 "])
def test_text_that_is_no_place_is_refused(text: str) -> None:
    with pytest.raises(PlaceError):
        Place.parse(text)


def test_a_topic_is_positive() -> None:
    with pytest.raises(PlaceError):
        Place(CHAT, 0)


def test_a_migrated_chat_keeps_each_topic() -> None:
    assert Place(-100).in_chat(CHAT) == Place(CHAT)
    assert Place(-100, 7).in_chat(CHAT) == Place(CHAT, 7)
    assert places_of(-100) == [Place(-100)]  # for now, one game per chat


def test_places_sort_by_chat_then_topic() -> None:
    assert sorted([Place(5, 2), Place(-3), Place(5), Place(5, 1)]) == [
        Place(-3),
        Place(5),
        Place(5, 1),
        Place(5, 2),
    ]


def test_a_private_chat_is_a_place_without_a_topic() -> None:
    assert private_chat(7) == Place(7)


def test_an_update_is_in_its_chats_place() -> None:
    """Without a topic message, the chat's place (topics: tests/test_bot_topics_e2e.py)."""
    chat = SimpleNamespace(id=CHAT, is_forum=True)
    update: Any = SimpleNamespace(effective_chat=chat, effective_message=None)
    assert place_of(update) == Place(CHAT)
    assert place_of(SimpleNamespace(effective_chat=None)) is None  # type: ignore[arg-type]


# --- callback data and deep links -----------------------------------------------------


def test_old_hand_and_rules_buttons_decode_to_the_chats_place() -> None:
    """Data made before places existed: a bare chat id."""
    assert callbacks.decode(f"h:{CHAT}:{GID}:12:t") == HandButton(
        Place(CHAT), GID, 12, "move", Take()
    )
    assert callbacks.decode(f"h:{CHAT}:{GID}:0:w") == HandButton(Place(CHAT), GID, 0, "play_here")
    assert callbacks.decode(f"r:{CHAT}") == RulesButton(Place(CHAT))
    assert callbacks.decode(f"r:{CHAT}:b") == RulesButton(Place(CHAT), "bout")
    assert callbacks.decode("r:0") == RulesButton(None)  # the default options


def test_buttons_without_a_topic_are_spelt_as_before() -> None:
    assert callbacks.encode_move(Place(CHAT), GID, 12, Take()) == f"h:{CHAT}:{GID}:12:t"
    assert callbacks.encode_rules(Place(CHAT)) == f"r:{CHAT}"
    assert callbacks.encode_rules(None) == "r:0"


def test_buttons_with_a_topic_round_trip() -> None:
    place = Place(CHAT, 42)
    data = callbacks.encode_pick(place, GID, 3, Card(5))
    assert data.startswith(f"h:{CHAT}_42:{GID}:3:")
    assert callbacks.decode(data) == HandButton(place, GID, 3, "pick", card=Card(5))
    assert callbacks.decode(callbacks.encode_rules(place, "goal")) == RulesButton(place, "goal")
    assert callbacks.without_steps(data) == f"h:{CHAT}_42:{GID}::b" + data[-1]


def test_the_longest_hand_button_fits_telegrams_64_bytes() -> None:
    place = Place(LONGEST_CHAT, LONGEST_TOPIC)
    attack = Attack(tuple(Card(n) for n in range(6)))
    data = callbacks.encode_move(place, GID, 9_999_999, attack)
    assert len(data.encode()) <= callbacks.MAX_BYTES
    assert callbacks.decode(data) == HandButton(place, GID, 9_999_999, "move", attack)
    rules = callbacks.encode_rules(place, "options")
    assert len(rules.encode()) <= callbacks.MAX_BYTES


@pytest.mark.parametrize("data", [f"h:{CHAT}_0:{GID}:1:t", f"h:{CHAT}_:{GID}:1:t", f"r:{CHAT}_0"])
def test_a_forged_place_in_button_data_is_refused(data: str) -> None:
    with pytest.raises(CallbackError):
        callbacks.decode(data)


def test_deep_links_carry_the_place_and_old_ones_still_work() -> None:
    assert callbacks.encode_group_link(Place(CHAT)) == f"g{CHAT}"  # as before places
    assert callbacks.decode_group_link(f"g{CHAT}") == Place(CHAT)
    assert callbacks.encode_group_link(Place(CHAT, 9)) == f"g{CHAT}_9"
    assert callbacks.decode_group_link(f"g{CHAT}_9") == Place(CHAT, 9)
    for payload in ("", "g", "gabc", f"g{CHAT}_0", f"x{CHAT}"):
        assert callbacks.decode_group_link(payload) is None


# --- keys and index members -----------------------------------------------------------


def test_a_games_keys_without_a_topic_are_the_chats_as_before() -> None:
    place = Place(-100)
    assert keys.table_key(place) == "durak:{-100}:table"
    assert keys.output_key(place) == "durak:{-100}:output"
    assert keys.screen_key(place) == "durak:{-100}:screen"
    assert keys.edit_claim_key(place, "group") == "durak:{-100}:editing:group"
    assert keys.send_claim_key(place, "group:g1") == "durak:{-100}:sending:group:g1"
    assert keys.pending_stats_key(place, "g1") == "durak:{-100}:pending-stats:g1"
    assert keys.pending_rating_key(place, "g1") == "durak:{-100}:pending-rating:g1"
    assert keys.lost_notice_key(place, "g1") == "durak:{-100}:lost:g1"
    assert keys.counted_key(7, place, "g1") == "durak:user:{7}:counted:-100:g1"
    assert keys.rated_key(7, place, "g1") == "durak:user:{7}:rated:-100:g1"
    assert keys.pending_member(place, "g1") == "-100:g1"
    assert open_key(place, 7) == "durak:webapp:open:{-100}:7"


def test_a_topics_keys_are_its_own_in_its_chats_slot() -> None:
    place = Place(-100, 7)
    assert keys.table_key(place) == "durak:{-100}_7:table"
    assert keys.output_key(place) == "durak:{-100}_7:output"
    assert keys.screen_key(place) == "durak:{-100}_7:screen"
    assert keys.shown_key(place) == "durak:{-100}_7:shown"
    assert keys.rating_plan_key(place, "g1") == "durak:{-100}_7:rating-plan:g1"
    assert keys.quarantine_key(place, 1.5) == "durak:{-100}_7:quarantine:1.500000"
    assert keys.counted_key(7, place, "g1") == "durak:user:{7}:counted:-100_7:g1"
    assert keys.pending_member(place, "g1") == "-100_7:g1"
    assert keys.parse_pending_member("-100_7:g1") == (place, "g1")
    assert keys.parse_pending_member("-100:g1") == (Place(-100), "g1")
    assert keys.place_shard(place) == keys.shard_of(-100)
    assert open_key(place, 7) == "durak:webapp:open:{-100}_7:7"
    # The group's own keys stay the chat's, whichever of its places plays.
    assert keys.stats_key(place.chat_id) == "durak:{-100}:stats"
    assert keys.settings_key(place.chat_id) == "durak:{-100}:settings"


async def test_a_topics_game_is_stored_indexed_and_timed_apart_from_the_chats() -> None:
    redis = fakeredis.aioredis.FakeRedis()
    store = Storage(redis, finished_ttl=60, idle_ttl=60)
    topic, chat = Place(-100, 7), Place(-100)
    game = ChatGame(game_id="g1", chat_id=-100, topic_id=7, creator_id=1, phase="playing")

    def put(_: ChatGame | None) -> Write[None]:
        return Write(game, None)

    await store.update_table(topic, put)
    assert await redis.exists("durak:{-100}_7:table")
    assert await store.load_table(chat) is None
    loaded = await store.load_table(topic)
    assert loaded is not None and loaded.place == topic
    assert await store.running_places() == [topic]
    await store.set_timer(topic, 5.0)
    assert [(due, place) for due, place, _ in await store.timers_due_by(10.0)] == [(5.0, topic)]


# --- records ------------------------------------------------------------------------------

BEFORE_PLACES = (
    '{"schema":1,"game_id":"ab12cd","chat_id":-1001234567890,"chat_title":"Friday",'
    '"phase":"lobby","creator_id":7,"rules":{"deck_size":36,"variant":"podkidnoy",'
    '"throw_in":"all","multi_card_lead":true,"first_bout_limit":"always","trump_swap":true,'
    '"series_length":1,"partners":false},"seats":[{"user_id":7,"name":"Ann","lang":"en",'
    '"ai":null,"left":false,"hand_message_id":null,"timeouts":0,"last_active":0.0,'
    '"joined_at":0.0}],"state":null,"series":null,"forced_durak":null,'
    '"lobby_expires_at":null,"creator_seen_at":0.0,"table_message_id":null,'
    '"lobby_message_id":null,"show_how_to":true,"turn_deadline":null,"ai_due":null,'
    '"reminder_due":null,"reminded_step":-1,"last_seen_step":-1,"final_order":[],'
    '"final_durak":null,"final_losing_team":null,"ended_early":false,"auto_steps":[],'
    '"started_at":null,"finished_at":null}'
)
"""A lobby record as the bot wrote it before places existed."""


def _lobby(**fields: Any) -> ChatGame:
    seats = [Seat(user_id=7, name="Ann")]
    return ChatGame(
        game_id=GID, chat_id=CHAT, chat_title="Friday", creator_id=7, seats=seats, **fields
    )


def test_a_record_without_a_topic_is_written_byte_for_byte_as_before() -> None:
    game = _lobby()
    assert game.to_json() == BEFORE_PLACES
    assert game.place == Place(CHAT)
    assert ChatGame.model_validate_json(BEFORE_PLACES).place == Place(CHAT)


def test_a_record_with_a_topic_round_trips() -> None:
    game = _lobby(topic_id=42)
    stored = game.to_json()
    assert json.loads(stored)["topic_id"] == 42
    again = ChatGame.model_validate_json(stored)
    assert again == game and again.place == Place(CHAT, 42)
    assert again.to_json() == stored


# --- sends ----------------------------------------------------------------------------------


def test_a_send_names_its_topic_only_when_it_has_one() -> None:
    assert message_params(CHAT, "hi", None) == {"chat_id": CHAT, "text": "hi", "parse_mode": "HTML"}
    assert message_params(CHAT, "hi", None, None) == message_params(CHAT, "hi", None)
    assert message_params(CHAT, "hi", None, 42)["message_thread_id"] == 42


class RecordingBot:
    """Answers at once and keeps every new message's parameters."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def do_api_request(self, endpoint: str, api_kwargs: dict[str, Any]) -> Any:
        assert endpoint.lower() == "sendmessage"
        self.sent.append(api_kwargs)
        return {"message_id": 100 + len(self.sent)}

    async def send_message(self, chat_id: int, text: str, **kwargs: Any) -> Any:
        self.sent.append({"chat_id": chat_id, "text": text, **kwargs})
        return SimpleNamespace(message_id=100 + len(self.sent))


@pytest.mark.parametrize("topic", [None, 7])
async def test_a_games_messages_go_into_its_place(topic: int | None) -> None:
    bot = RecordingBot()
    storage = Storage(fakeredis.aioredis.FakeRedis(), finished_ttl=60, idle_ttl=60)

    async def render(game: ChatGame) -> Rendered:
        return Rendered(f"lobby {game.place}")

    async def render_note(place: Place, note: dict[str, Any]) -> Rendered:
        return Rendered(f"note {place}")

    box = Outbox(
        bot,  # type: ignore[arg-type]
        storage,
        render_group=render,
        render_hand=render,  # type: ignore[arg-type]
        group_interval=0,
        group_max_per_minute=100_000,
        calm_delay=0,
        private_interval=0,
        global_rate=1000,
    )
    place = Place(-100, topic)
    game = ChatGame(game_id="g1", chat_id=-100, topic_id=topic, creator_id=1)
    notes = [{"kind": "announce", "key": "x"}]
    await storage.update_table(
        place, lambda _: Write(game, None, output=Owed(["group"], [], notes))
    )
    box.deliver(place, await storage.owed_output(place), render_note)
    box.say(place, Rendered("reply"))
    await box.idle()
    assert sorted(sent["text"] for sent in bot.sent) == sorted(
        [f"lobby {place}", f"note {place}", "reply"]
    )
    for sent in bot.sent:
        assert sent["chat_id"] == -100
        if topic is None:
            assert "message_thread_id" not in sent  # as every call before places
        else:
            assert sent["message_thread_id"] == topic
    stored = await storage.load_table(place)
    assert stored is not None and stored.lobby_message_id is not None
    assert (await storage.owed_output(place)).complete
