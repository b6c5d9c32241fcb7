"""The Mini App's small pieces against a real redis-server: presence and the game index."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.domain.place import Place
from bot.store.presence import Presence, open_key
from bot.webapp.hub import Hub, game_key


async def no_table(place: Place) -> None:
    return None


async def test_game_index_is_remembered_until_asked_fresh(real_redis: Redis) -> None:
    hub = Hub(real_redis, no_table)
    assert await hub.place_of("abc123") is None
    await real_redis.set(game_key("abc123"), "-100")
    assert await hub.place_of("abc123") == Place(-100)
    await real_redis.set(game_key("abc123"), "-200")  # the group became a supergroup
    assert await hub.place_of("abc123") == Place(-100)  # no read
    assert await hub.place_of("abc123", fresh=True) == Place(-200)
    assert await hub.place_of("abc123") == Place(-200)


async def test_presence_back_in_chat_until_opened_again(real_redis: Redis) -> None:
    presence = Presence(real_redis, ttl=30)
    assert await presence.back_in_chat(7) is None  # never opened: nothing to bring back
    await presence.mark(Place(-100), 7)
    assert await presence.in_app(Place(-100), 7)
    assert await presence.keep(Place(-100), 7)
    assert await presence.back_in_chat(7) == Place(-100)  # found by user alone (a message)
    assert not await presence.in_app(Place(-100), 7)
    assert not await presence.keep(Place(-100), 7)  # the old stream cannot revive it
    assert await real_redis.exists(open_key(Place(-100), 7)) == 0
    await presence.mark(Place(-100), 7)  # opened again
    assert await presence.in_app_of(Place(-100), {7, 8}) == {7}
    assert await presence.back_in_chat(7, Place(-100)) == Place(-100)  # the button names it
    assert await presence.back_in_chat(7, Place(-100)) is None
