"""Chaos soak: many groups play through a fleet of webhook workers on a Redis Cluster while
workers are killed, a master fails over and the Bot API fails or answers late; then every
game must have ended with every message showing its stored record.

Three ``python -m bot`` webhook workers (as ``bench/bot_load.py --workers 3 --cluster``)
behind the test front (tests/support/front.py), a real Redis Cluster of three masters with
a replica each (tests/support/cluster.py) and the Bot API emulator with Telegram's flood
limits. Simulated people play at a human pace (``--think-min``/``--think-max`` seconds a
decision), two per group, and every ``--ai-every``-th group seats a computer player too;
after each game the creator starts a rematch. For ``--seconds``:

- a random worker is killed with SIGKILL about every ``--kill-every`` seconds, and a fresh
  one takes its place once ready;
- once (at ``--failover-at``) a master's replica takes over with ``CLUSTER FAILOVER``
  (``--failover kill``: the master's process is killed instead, and later restarted);
- about every ``--fault-every`` seconds the emulator fails a few output calls with a 5xx or
  answers calls late for a few seconds (sandbox/emulator/faults.py).

Then no new game starts; running games are played out (at most ``--drain`` seconds) and
checked: every game ended; each game's table, hands and results equal a fresh render of
its record (bench/chaos_check.py, run on the bot tree under test); one result message per
game; each game counted once in the group's and the players' statistics; no hand message
left over beyond one per kill (README, "What survives a crash"); every tap answered, except
taps a killed worker had taken (its webhook answered 200 before handling them: they are
reported apart). Exits 1 if a check fails.

    .venv/bin/python bench/chaos_soak.py                      # 30 groups, 10 minutes
    .venv/bin/python bench/chaos_soak.py --seconds 180 --json /tmp/chaos.json
    git worktree add /tmp/before HEAD~3
    .venv/bin/python bench/chaos_soak.py --bot-tree /tmp/before   # the same soak, older bot
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from chaos_check import Checker, checker  # bench/ is the script's folder

from sandbox.emulator import BotApiEmulator, EmuMessage, RateLimits
from sandbox.emulator.errors import EmulatorError
from sandbox.emulator.events import Subscription
from sandbox.emulator.faults import FaultRule, InjectedError, SlowAnswer

# The tests' helpers (a Redis Cluster, the webhook front and its workers).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.cluster import NODE_OPTIONS, Cluster, redis_cluster
from support.front import Front, Worker, start_worker, stop_workers, wait_ready

T = TypeVar("T")
HERE = Path(__file__).resolve().parents[1]
TOKEN = "7770002:chaos-soak-token"
BOT_USERNAME = "durak_chaos_bot"
GAME_OVER = "Game over"
TRY_AGAIN = "Something went wrong"
"""The start of the toast a tap gets while Redis does not answer: the player taps again."""
PREFERENCE = "pBatbr"
"""Moves a player makes, most wanted first: pass, beat, attack, take, pick a card to beat
with, transfer (a short game); a trump swap and leaving are never pressed."""
DECK_PRESSES = {36: 0, 52: 1, 24: 2}
"""Taps of a lobby's cycling deck button (code before the options screen) per deck."""
DECK_VALUES = (24, 36, 52)
MOVE_TAKEN = "✓ "
"""How a taken move's answer starts (the toasts' tally leaves those out)."""
"""The deck option's values on the options screen: ``d<index>`` sets one."""
"""Taps on the lobby's deck option from the default 36 (it cycles 24, 36, 52)."""
FAULT_METHODS = ("sendMessage", "editMessageText", "deleteMessage")
"""Calls that fail with a 5xx: the output, which the bot retries. answerCallbackQuery is
only slowed (a failed answer cannot be given again: that tap would be unanswered)."""
SLOW_METHODS = (*FAULT_METHODS, "answerCallbackQuery")
CHECKS = {
    "games_ended": "every game started ended (within the drain)",
    "messages_match_records": "table, hands and results equal a fresh render of the record",
    "one_result_per_game": "one result message per game",
    "stats_once": "each game counted once in the group's and each player's statistics",
    "leftover_hands": "at most one hand message left over per kill",
    "taps_answered": "every tap answered (but those a killed worker had taken)",
    "play_went_on": "every lobby, start and rematch tap was taken",
    "chaos_done": "the failover (when scheduled) happened",
}
TAKEN_WINDOW = 5.0
"""A tap left unanswered counts as taken by a killed worker only if the kill came this soon
after it (an answer takes milliseconds, a "try again" at most 3 s)."""
ERROR_TEXTS = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def say(line: str) -> None:
    """A line of the soak's progress, with the wall-clock time the worker logs use."""
    print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)


# --------------------------------------------------------------------------- options


@dataclass
class Options:
    groups: int = 30
    seconds: float = 600.0
    workers: int = 3
    kill_every: float = 60.0
    failover_at: float | None = None
    failover: str = "manual"
    fault_every: float = 20.0
    think_min: float = 1.0
    think_max: float = 4.0
    ai_every: int = 3
    deck: int = 36
    drain: float = 300.0
    settle: float = 60.0
    answer_timeout: float = 15.0
    output_lease: float | None = None
    seed: int = 1
    bot_tree: Path = HERE
    log_dir: Path | None = None
    json: Path | None = None

    @property
    def failover_time(self) -> float:
        return self.failover_at if self.failover_at is not None else self.seconds * 0.4


# --------------------------------------------------------------------------- results


@dataclass
class Tap:
    started: float
    latency: float | None
    """Seconds to the bot's answer; None: no answer within ``Options.answer_timeout``."""


@dataclass
class Tally:
    taps: list[Tap] = field(default_factory=list)
    moves: int = 0
    toasts: Counter[str] = field(default_factory=Counter)
    games_started: int = 0
    games_checked: int = 0
    leftovers: int = 0
    compared: int = 0
    """Messages found equal to a fresh render of their record."""
    kills: list[float] = field(default_factory=list)
    failover: dict[str, Any] = field(default_factory=dict)
    faults: list[FaultRule] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(check, what went wrong); the checks are those of ``CHECKS``."""

    def fail(self, check: str, problem: str) -> None:
        assert check in CHECKS, check
        self.failures.append((check, problem))
        say(f"CHECK FAILED ({check}): {problem}")


@dataclass
class Group:
    chat: int
    users: tuple[int, ...]
    computer: bool
    game_id: str | None = None
    finished: list[str] = field(default_factory=list)
    baseline: dict[int, int] = field(default_factory=dict)
    """Each player's newest private message id before the current game's first hand."""
    pressed: set[tuple[int, int, int]] = field(default_factory=set)
    """(user, message id, edit count): one tap per version of a keyboard."""

    @property
    def creator(self) -> int:
        return self.users[0]


@dataclass
class Soak:
    """Everything the players, the chaos and the checks share."""

    options: Options
    emu: BotApiEmulator
    checker: Checker
    tally: Tally
    rng: random.Random
    stop_new: float
    """Monotonic time after which no new game starts."""
    drain_end: float
    """Monotonic time by which every running game must have ended."""


# --------------------------------------------------------------------------- chat reading


def live_messages(emu: BotApiEmulator, chat: int) -> list[EmuMessage]:
    """The chat's current messages, read in place (no copies: the players look often)."""
    found = emu.chat(chat)
    if found is None:
        return []
    return [m for m in found.messages.values() if not m.deleted]


def callbacks_of(message: EmuMessage) -> list[str]:
    return [
        str(button["callback_data"])
        for row in message.inline_keyboard
        for button in row
        if "callback_data" in button
    ]


def group_button(emu: BotApiEmulator, chat: int, code: str, not_game: str | None = None) -> Any:
    """(message id, data) of the newest group button ``g:<game>:<code>`` (not of
    ``not_game``), or None."""
    for message in sorted(live_messages(emu, chat), key=lambda m: -m.message_id):
        for data in callbacks_of(message):
            parts = data.split(":")
            if len(parts) == 3 and parts[0] == "g" and parts[2] == code and parts[1] != not_game:
                return message.message_id, data
    return None


def results_messages(emu: BotApiEmulator, chat: int) -> list[EmuMessage]:
    return [m for m in live_messages(emu, chat) if m.from_bot and GAME_OVER in m.text]


def newest_id(emu: BotApiEmulator, chat: int) -> int:
    return max((m.message_id for m in live_messages(emu, chat)), default=0)


async def until(
    changes: Subscription, predicate: Callable[[], T | None], deadline: float
) -> T | None:
    """``predicate``'s first truthy value, looked at after each change of the group's
    chats; None once ``deadline`` (monotonic) passes."""
    while True:
        found = predicate()
        if found:
            return found
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        with contextlib.suppress(TimeoutError):
            await changes.get(timeout=left)


# --------------------------------------------------------------------------- taps


async def tap(soak: Soak, user: int, chat: int, message_id: int, data: str) -> str | None:
    """Press a button; the answer's toast ("" for none), or None when the bot did not
    answer in time (or the button was gone by the time the finger landed: "gone")."""
    started = time.monotonic()
    try:
        handle = await soak.emu.user_presses(user, chat, message_id, data=data)
    except EmulatorError:
        return "gone"  # edited or deleted under the finger: look again
    try:
        answer = await handle.answer(timeout=soak.options.answer_timeout)
    except TimeoutError:
        soak.tally.taps.append(Tap(started, None))
        return None
    soak.tally.taps.append(Tap(started, time.monotonic() - started))
    text = answer.text or ""
    if text and not text.startswith(MOVE_TAKEN):
        soak.tally.toasts[text] += 1
    return text


def taken_move(answer: str) -> bool:
    """A move the bot made: answered with no toast (older code) or with the move itself
    said to its maker ("✓ You beat …")."""
    return answer == "" or answer.startswith(MOVE_TAKEN)


async def press_until_taken(
    soak: Soak,
    changes: Subscription,
    user: int,
    chat: int,
    find: Callable[[], tuple[int, str] | None],
    what: str,
) -> bool:
    """Tap the button ``find`` shows until the bot takes it (a lost or "try again" tap is
    tapped again, as a person would); False if it never shows or is never taken."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        button = await until(changes, find, deadline)
        if button is None:
            break
        message_id, data = button
        answer = await tap(soak, user, chat, message_id, data)
        if answer is not None and answer != "gone" and not answer.startswith(TRY_AGAIN):
            return True
        with contextlib.suppress(TimeoutError):
            await changes.get(timeout=1.0)  # a moment before tapping again
    soak.tally.fail("play_went_on", f"{what}: never taken")
    return False


def pick_move(soak: Soak, group: Group) -> tuple[int, int, int, str] | None:
    """(user, message id, edit count, data) of the move to make next: on each player's
    newest hand only (an older one left over is counted at the game's end), one tap per
    version of it, usually the most wanted kind of move."""
    options: list[tuple[int, int, int, int, str]] = []
    for user in group.users:
        hands = [m for m in live_messages(soak.emu, user) if m.from_bot and callbacks_of(m)]
        if not hands:
            continue
        hand = max(hands, key=lambda m: m.message_id)
        if (user, hand.message_id, hand.edit_count) in group.pressed:
            continue
        for data in callbacks_of(hand):
            op = data.split(":")[4][:1] if data.startswith("h:") else ""
            if op and op in PREFERENCE:
                options.append((PREFERENCE.index(op), user, hand.message_id, hand.edit_count, data))
    if not options:
        return None
    choice = min(options) if soak.rng.random() < 0.8 else soak.rng.choice(options)
    return choice[1:]


# --------------------------------------------------------------------------- a group


async def run_group(soak: Soak, group: Group, delay: float) -> None:
    """Set the group up, then play game after game until time is up; check each."""
    await asyncio.sleep(delay)  # groups come one after another, as in real life
    users = [group.chat, *group.users]
    with soak.emu.subscribe(users) as changes:
        if not await open_first_lobby(soak, group, changes):
            return
        while True:
            if not await start_game(soak, group, changes):
                return
            if not await play_game(soak, group, changes):
                await report_stuck(soak, group)
                return
            await check_game(soak, group, changes)
            if time.monotonic() >= soak.stop_new:
                return
            if not await rematch(soak, group, changes):
                return


async def report_stuck(soak: Soak, group: Group) -> None:
    """A game that did not end in time, with what its record says (the evidence)."""
    snap = await soak.checker.snapshot(group.chat)
    record = {k: snap.get(k) for k in ("game_id", "phase", "owed_complete", "group_played")}
    results = len(results_messages(soak.emu, group.chat))
    where = f"group {group.chat}: game {group.game_id}"
    soak.tally.fail("games_ended", f"{where} did not end ({results} results shown; {record})")


async def rematch(soak: Soak, group: Group, changes: Subscription) -> bool:
    """The creator taps Rematch on the result; the new lobby has the same seats."""
    old = group.game_id

    def again() -> tuple[int, str] | None:
        found = group_button(soak.emu, group.chat, "N")
        return found if found and f":{old}:" in found[1] else None

    what = f"group {group.chat}: rematch of {old}"
    if not await press_until_taken(soak, changes, group.creator, group.chat, again, what):
        return False
    return await wait_lobby(soak, group, changes, old)


async def open_first_lobby(soak: Soak, group: Group, changes: Subscription) -> bool:
    """Players open the private chat, the creator types /newgame, the others join; a
    computer seat and the deck size are set on the lobby."""
    for user in group.users:
        await soak.emu.user_starts_bot(user)
    greeted = await until(
        changes,
        lambda: all(any(m.from_bot for m in live_messages(soak.emu, u)) for u in group.users),
        time.monotonic() + 120,
    )
    if not greeted:
        soak.tally.fail("play_went_on", f"group {group.chat}: no greeting in private")
        return False
    for _ in range(5):  # a /newgame a killed worker had taken is typed again
        await soak.emu.user_sends(group.creator, group.chat, "/newgame")
        if await wait_lobby(soak, group, changes, None, quiet=True):
            break
    else:
        soak.tally.fail("play_went_on", f"group {group.chat}: no lobby after /newgame")
        return False
    codes = ["e"] if group.computer else []
    codes += deck_codes(soak.emu, group.chat, soak.options.deck)
    steps = [(user, "j") for user in group.users[1:]] + [(group.creator, c) for c in codes]
    gid = group.game_id
    for user, code in steps:

        def lobby_button(code: str = code) -> tuple[int, str] | None:
            found = group_button(soak.emu, group.chat, code)
            return found if found and f":{gid}:" in found[1] else None

        what = f"group {group.chat}: lobby button {code}"
        if not await press_until_taken(soak, changes, user, group.chat, lobby_button, what):
            return False
    return True


def deck_codes(emu: BotApiEmulator, chat: int, deck: int) -> list[str]:
    """The lobby taps that choose ``deck``: a cycling deck button (code from before the
    options screen, as an older ``--bot-tree`` has), or the options screen's value."""
    if group_button(emu, chat, "d") is not None:
        return ["d"] * DECK_PRESSES[deck]
    return [] if deck == 36 else ["o", f"d{DECK_VALUES.index(deck)}", "b"]


async def wait_lobby(
    soak: Soak, group: Group, changes: Subscription, old: str | None, *, quiet: bool = False
) -> bool:
    """Until a lobby of a game other than ``old`` shows; notes its game id."""
    found = await until(
        changes,
        lambda: group_button(soak.emu, group.chat, "s", old),
        time.monotonic() + (20 if quiet else 120),
    )
    if found is None:
        if not quiet:
            soak.tally.fail("play_went_on", f"group {group.chat}: no lobby after game {old}")
        return False
    group.game_id = found[1].split(":")[1]
    return True


async def start_game(soak: Soak, group: Group, changes: Subscription) -> bool:
    gid = group.game_id
    group.baseline = {user: newest_id(soak.emu, user) for user in group.users}
    group.pressed.clear()

    def start() -> tuple[int, str] | None:
        found = group_button(soak.emu, group.chat, "s")
        return found if found and f":{gid}:" in found[1] else None

    what = f"group {group.chat}: start {gid}"
    if not await press_until_taken(soak, changes, group.creator, group.chat, start, what):
        return False
    soak.tally.games_started += 1
    return True


async def play_game(soak: Soak, group: Group, changes: Subscription) -> bool:
    """Move after move until the game's result shows; False if it has not by the end of
    the drain."""
    think = (soak.options.think_min, soak.options.think_max)
    while True:

        def next_step() -> tuple[int, int, int, str] | bool | None:
            if len(results_messages(soak.emu, group.chat)) > len(group.finished):
                return True
            return pick_move(soak, group)

        step = await until(changes, next_step, soak.drain_end)
        if step is None:
            return False
        if step is True:
            return True
        assert isinstance(step, tuple)
        user, message_id, edits, data = step
        group.pressed.add((user, message_id, edits))
        await asyncio.sleep(soak.rng.uniform(*think))  # a person reads the hand first
        answer = await tap(soak, user, user, message_id, data)
        if answer is None or (answer and answer.startswith(TRY_AGAIN)):
            group.pressed.discard((user, message_id, edits))  # no answer: tap again
        elif taken_move(answer) and data.split(":")[4][:1] != "b":
            soak.tally.moves += 1  # a pick only changes the keyboard


# --------------------------------------------------------------------------- checks


async def check_game(soak: Soak, group: Group, changes: Subscription) -> None:
    """A game just ended: wait (at most ``--settle`` s: a dead worker's output is taken
    over after its lease) until its messages show the finished record and nothing is
    owed; then count its results and statistics and clear the hands left over."""
    where = f"group {group.chat} game {group.game_id}"
    deadline = time.monotonic() + soak.options.settle
    while True:
        snap = await soak.checker.snapshot(group.chat)
        problem = screen_problem(soak.emu, group, snap)
        if problem is None or time.monotonic() > deadline:
            break
        with contextlib.suppress(TimeoutError):
            await changes.get(timeout=1.0)  # or look again: Redis changes have no event here
    if problem is not None:
        soak.tally.fail("messages_match_records", f"{where}: {problem}")
    else:
        soak.tally.games_checked += 1
        soak.tally.compared += len(snap["expected"])
    check_results(soak, group, snap, where)
    await clear_leftovers(soak, group, changes, snap, where)
    assert group.game_id is not None
    group.finished.append(group.game_id)


def screen_problem(emu: BotApiEmulator, group: Group, snap: dict[str, Any]) -> str | None:
    """What keeps the chats from showing the finished record ``snap``, or None."""
    if "error" in snap:
        return f"storage: {snap['error']}"
    if snap.get("game_id") != group.game_id:
        return f"the record holds game {snap.get('game_id')}"
    if snap["phase"] != "finished":
        return f"the record is {snap['phase']}"
    for chat, message_id, html in snap["expected"]:
        if message_id is None:
            return f"chat {chat}: the record names no message"
        found = emu.chat(chat)
        shown = found.messages.get(message_id) if found is not None else None
        if shown is None or shown.deleted:
            return f"chat {chat}: message {message_id} is gone"
        if shown.html != html:
            return f"chat {chat}: message {message_id} shows {shown.text[:100]!r}, not its record"
    if not snap["owed_complete"]:
        return "output is still owed"
    return None


def check_results(soak: Soak, group: Group, snap: dict[str, Any], where: str) -> None:
    games = len(group.finished) + 1
    results = results_messages(soak.emu, group.chat)
    if len(results) != games:
        soak.tally.fail("one_result_per_game", f"{where}: {len(results)} results after {games}")
    elif snap.get("results") and results[-1].html != snap["results"]:
        shown = results[-1].text[:100]
        soak.tally.fail("messages_match_records", f"{where}: the result shows {shown!r}")
    played = snap.get("group_played", {})
    for user in group.users:
        if played.get(str(user)) != games:
            counted = played.get(str(user))
            soak.tally.fail("stats_once", f"{where}: {user} counted {counted} of {games} games")


async def clear_leftovers(
    soak: Soak, group: Group, changes: Subscription, snap: dict[str, Any], where: str
) -> None:
    """Count every private message of this game besides the record's hand (a worker
    killed between Telegram's answer and noting the id leaves one); each must go at its
    first tap (the guard deletes an older hand of the running record)."""
    hands = {int(user): mid for user, mid in snap.get("seats", [])}
    for user in group.users:
        extra = [
            m
            for m in live_messages(soak.emu, user)
            if m.from_bot
            and m.message_id > group.baseline[user]
            and m.message_id != hands.get(user)
        ]
        for old in extra:
            soak.tally.leftovers += 1
            await clear_leftover(
                soak, changes, user, old, f"{where}: {user}'s hand {hands.get(user)}"
            )


async def clear_leftover(
    soak: Soak, changes: Subscription, user: int, old: EmuMessage, where: str
) -> None:
    """Tap a message left over; it must go (what it was is printed: the evidence)."""
    first_line = old.text.splitlines()[0][:80] if old.text else ""
    data = next((d for d in callbacks_of(old) if d.startswith("h:")), None)
    say(
        f"{where}: message {old.message_id} left over ({old.edit_count} edits, "
        f"{first_line!r}, first button {data})"
    )
    if data is None:
        soak.tally.fail("leftover_hands", f"{where}: kept {old.message_id} with no buttons")
        return
    answer = await tap(soak, user, user, old.message_id, data)

    def deleted() -> bool:
        return old.deleted  # the live message: the emulator marks it in place

    if not await until(changes, deleted, time.monotonic() + 30):
        problem = f"{old.message_id} stays after a tap (answer {answer!r})"
        soak.tally.fail("leftover_hands", f"{where}: {problem}")


async def final_checks(soak: Soak, groups: list[Group]) -> None:
    """After the drain: nothing shows anything else since each game's check, one result
    per game in all, and every player's own totals (a settler may add them late)."""
    for group in groups:
        if not group.finished:
            continue
        if group.game_id == group.finished[-1]:
            problem = screen_problem(soak.emu, group, await soak.checker.snapshot(group.chat))
            if problem is not None:
                soak.tally.fail(
                    "messages_match_records", f"group {group.chat} at the end: {problem}"
                )
        results = len(results_messages(soak.emu, group.chat))
        if results != len(group.finished):
            where = f"group {group.chat} at the end"
            soak.tally.fail(
                "one_result_per_game", f"{where}: {results} results, {len(group.finished)} games"
            )
    wanted = {user: len(group.finished) for group in groups for user in group.users}
    deadline = time.monotonic() + soak.options.settle
    while True:
        with contextlib.suppress(RuntimeError):  # a storage hiccup: ask again
            counted = await soak.checker.user_played(list(wanted))
            if counted == wanted or time.monotonic() > deadline:
                break
        await asyncio.sleep(1.0)  # Redis: no event to wait on
    for user, games in wanted.items():
        if counted.get(user) != games:
            soak.tally.fail("stats_once", f"user {user}: {counted.get(user)} of {games} games")
    if soak.tally.leftovers > len(soak.tally.kills):
        kills = len(soak.tally.kills)
        soak.tally.fail("leftover_hands", f"{soak.tally.leftovers} left over, {kills} kills")
    unexplained = [t for t in soak.tally.taps if t.latency is None and not taken_by_dead(soak, t)]
    if unexplained:
        soak.tally.fail("taps_answered", f"{len(unexplained)} taps never answered")


def taken_by_dead(soak: Soak, tap: Tap) -> bool:
    """A tap a worker was killed while handling (its webhook had answered 200 already)."""
    late = tap.started + TAKEN_WINDOW
    return any(tap.started <= kill <= late for kill in soak.tally.kills)


# --------------------------------------------------------------------------- chaos


@dataclass
class Fleet:
    """The webhook workers behind the front: killed and replaced while the soak runs."""

    front: Front
    tree: Path
    settings: dict[str, str]
    log_dir: Path
    workers: list[Worker] = field(default_factory=list)
    joining: list[asyncio.Task[None]] = field(default_factory=list)
    logs: list[IO[str]] = field(default_factory=list)

    async def start(self) -> Worker:
        log = (self.log_dir / f"worker-{len(self.workers)}.log").open("w")
        self.logs.append(log)
        worker = await start_worker(self.front, self.tree, self.settings, log=log, serve=False)
        self.workers.append(worker)
        return worker

    async def join(self, worker: Worker) -> None:
        """Once ready, the front sends it updates too (as a proxy's health check would)."""
        await wait_ready([worker], timeout=120)
        self.front.ports.append(worker.port)

    def serving(self) -> list[Worker]:
        alive = [w for w in self.workers if w.process.returncode is None]
        return [w for w in alive if w.port in self.front.ports]

    async def kill_one(self, rng: random.Random) -> float:
        """SIGKILL a random serving worker (one stays to serve) and boot its successor;
        returns when it was killed (monotonic)."""
        while len(self.serving()) < 2 and self.joining:
            await self.joining.pop(0)
        victim = rng.choice(self.serving())
        victim.process.kill()  # no chance to hand anything back
        killed = time.monotonic()
        await victim.process.wait()
        with contextlib.suppress(ValueError):
            self.front.ports.remove(victim.port)
        self.joining.append(asyncio.create_task(self.join(await self.start())))
        return killed

    async def stop(self) -> None:
        for task in self.joining:
            task.cancel()
        await stop_workers(self.workers)
        for log in self.logs:
            log.close()


async def kill_workers(soak: Soak, fleet: Fleet) -> None:
    """About every ``--kill-every`` seconds until time is up."""
    every = soak.options.kill_every
    chaos = random.Random(soak.options.seed + 1)  # apart from the players': the same schedule
    while every > 0:
        wait = every * chaos.uniform(0.7, 1.3)
        if time.monotonic() + wait >= soak.stop_new:
            return
        await asyncio.sleep(wait)  # the schedule of the chaos, not a wait for an event
        soak.tally.kills.append(await fleet.kill_one(chaos))
        say(f"kill -9 of a worker ({len(soak.tally.kills)})")


async def inject_faults(soak: Soak) -> None:
    """About every ``--fault-every`` seconds: a few output calls fail with a 5xx (the next
    2-6 of one method, however long it takes: deletes are rare), or answers come late for a
    few seconds (their effect is immediate). Every rule ends when time is up: the drain and
    the checks see a healthy Bot API."""
    every, rng = soak.options.fault_every, random.Random(soak.options.seed + 2)
    n = 0
    while every > 0:
        wait = every * rng.uniform(0.5, 1.5)
        if time.monotonic() + wait >= soak.stop_new:
            break
        await asyncio.sleep(wait)  # the schedule of the chaos, not a wait for an event
        soak.tally.faults.append(new_fault(soak.emu, rng, slow=n % 2 == 1))
        n += 1
    await asyncio.sleep(max(0.0, soak.stop_new - time.monotonic()))
    for rule in soak.tally.faults:
        rule.cancel()


def new_fault(emu: BotApiEmulator, rng: random.Random, *, slow: bool) -> FaultRule:
    if slow:
        delay = rng.uniform(1.0, 3.0)
        return emu.delay_answers(rng.choice(SLOW_METHODS), delay, for_seconds=rng.uniform(3, 8))
    code = rng.choice(list(ERROR_TEXTS))
    method = rng.choice(FAULT_METHODS)
    return emu.fail_calls(
        method, times=rng.randint(2, 6), error_code=code, description=ERROR_TEXTS[code]
    )


def describe_fault(rule: FaultRule) -> str:
    """E.g. "deleteMessage 502 x4: 4 hits" or "sendMessage late 2.1s: 17 hits"."""
    if isinstance(rule, SlowAnswer):
        return f"{rule.method} late {rule.delay:.1f}s: {rule.hits} hits"
    assert isinstance(rule, InjectedError)
    return f"{rule.method} {rule.error_code} x{rule.hits + (rule.times or 0)}: {rule.hits} hits"


async def fail_over(soak: Soak, cluster: Cluster, folder: Path) -> None:
    """Once, at ``--failover-at``: a master's replica takes over (``CLUSTER FAILOVER`` on
    it, or the master's process is killed and its replica elected; it is restarted then
    and comes back as a replica)."""
    at = soak.stop_new - soak.options.seconds + soak.options.failover_time
    if soak.options.failover == "none" or at >= soak.stop_new:
        return
    await asyncio.sleep(max(0.0, at - time.monotonic()))  # the chaos's schedule
    began = time.monotonic()
    master = random.Random(soak.options.seed + 3).choice(await asyncio.to_thread(cluster.masters))
    replica = await asyncio.to_thread(replica_of, cluster, master)
    if soak.options.failover == "manual":
        await asyncio.to_thread(cluster.cli, replica, "cluster", "failover")
    else:
        cluster.processes[master].kill()
        await asyncio.to_thread(cluster.processes[master].wait)
    promoted = await until_promoted(cluster, replica, began + 60)
    seconds = time.monotonic() - began
    if soak.options.failover == "kill":
        cluster.processes[master] = restart_node(master, folder / str(master))
    soak.tally.failover = {
        "mode": soak.options.failover,
        "master": master,
        "replica": replica,
        "promoted": promoted,
        "seconds": round(seconds, 2),
    }
    say(f"failover of master {master} to {replica}: {promoted} in {seconds:.1f}s")


def replica_of(cluster: Cluster, master: int) -> int:
    master_id = cluster.cli(master, "cluster", "myid").strip()
    for line in cluster.cli(master, "cluster", "nodes").splitlines():
        parts = line.split()
        if parts[3] == master_id:  # the 4th field of a replica: its master's id
            return int(parts[1].split(":")[1].split("@")[0])
    raise LookupError(f"master {master} has no replica")


async def until_promoted(cluster: Cluster, replica: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        with contextlib.suppress(subprocess.SubprocessError):
            role = await asyncio.to_thread(cluster.cli, replica, "role")
            if role.split()[0] == "master":
                return True
        await asyncio.sleep(0.2)  # another process: nothing to await
    return False


def restart_node(port: int, folder: Path) -> subprocess.Popen[bytes]:
    """The killed node again, with its nodes.conf: it rejoins as its successor's replica."""
    return subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", *NODE_OPTIONS],
        cwd=folder,  # NODE_OPTIONS name nodes.conf relative to the node's own folder
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


# --------------------------------------------------------------------------- the run


def make_groups(emu: BotApiEmulator, options: Options) -> list[Group]:
    groups = []
    for g in range(options.groups):
        chat = -1_000_000 - g
        users = (10_000 + 8 * g, 10_001 + 8 * g)
        for k, user in enumerate(users):
            emu.add_user(user, f"{'AB'[k]}{g}")
        emu.add_group(chat, f"Chaos {g}", members=list(users), creator=users[0])
        every = options.ai_every
        groups.append(Group(chat, users, computer=every > 0 and g % every == every - 1))
    return groups


def worker_settings(
    options: Options, emu: BotApiEmulator, redis_env: dict[str, str]
) -> dict[str, str]:
    """The workers' environment: production defaults but for the addresses, and the bot
    tree under test first on the path (``start_worker`` also runs them in it)."""
    settings = redis_env | {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": emu.url,
        "LOG_LEVEL": "INFO",
        "PYTHONPATH": str(options.bot_tree),
    }
    if options.output_lease is not None:
        settings["OUTPUT_LEASE"] = str(options.output_lease)
    return settings


@contextlib.contextmanager
def cluster_in(folder: Path) -> Iterator[tuple[Cluster, dict[str, str]]]:
    with redis_cluster(folder) as cluster:
        yield cluster, {"REDIS_URL": cluster.url, "REDIS_CLUSTER": "true"}


@contextlib.asynccontextmanager
async def fleet_of(
    options: Options, emu: BotApiEmulator, redis_env: dict[str, str], log_dir: Path
) -> AsyncIterator[Fleet]:
    front = Front()
    await front.start()
    fleet = Fleet(front, options.bot_tree, worker_settings(options, emu, redis_env), log_dir)
    try:
        booting = [await fleet.start() for _ in range(options.workers)]
        await asyncio.gather(*(fleet.join(worker) for worker in booting))
        yield fleet
    finally:
        await fleet.stop()
        await front.stop()


async def run(options: Options) -> dict[str, Any]:
    """The whole soak; returns its figures and checks (``report`` prints them)."""
    log_dir = options.log_dir or Path(tempfile.gettempdir()) / "durak_chaos"
    log_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, cluster_in(Path(tmp)) as (cluster, redis_env):
        async with BotApiEmulator(rate_limits=RateLimits()) as emu:
            emu.add_bot(TOKEN, username=BOT_USERNAME)
            groups = make_groups(emu, options)
            async with (
                fleet_of(options, emu, redis_env, log_dir) as fleet,
                checker(options.bot_tree, redis_env, BOT_USERNAME) as check,
            ):
                emu.reset_stats()
                begin = time.monotonic()
                stop_new = begin + options.seconds
                soak = Soak(
                    options, emu, check, Tally(), random.Random(options.seed),
                    stop_new, stop_new + options.drain,
                )  # fmt: skip
                await play(soak, groups, fleet, cluster, Path(tmp))
                elapsed = time.monotonic() - begin
                emu.clear_faults()
                await final_checks(soak, groups)
                return figures(soak, groups, elapsed) | {"log_dir": str(log_dir)}


async def play(
    soak: Soak, groups: list[Group], fleet: Fleet, cluster: Cluster, folder: Path
) -> None:
    """The groups play while the chaos runs; the chaos ends when time is up, the groups
    once their last game is over and checked."""
    chaos = [
        asyncio.create_task(kill_workers(soak, fleet)),
        asyncio.create_task(fail_over(soak, cluster, folder)),
        asyncio.create_task(inject_faults(soak)),
    ]
    players = [run_group(soak, group, 0.3 * n) for n, group in enumerate(groups)]
    await asyncio.gather(*players)
    for task in chaos:
        if not task.done():
            task.cancel()  # every group gave up early (its failure is noted)
    for task in chaos:
        with contextlib.suppress(asyncio.CancelledError):
            await task
    for rule in soak.tally.faults:
        rule.cancel()
    scheduled = soak.options.failover_time < soak.options.seconds
    if soak.options.failover != "none" and scheduled and not soak.tally.failover.get("promoted"):
        soak.tally.fail("chaos_done", f"no failover: {soak.tally.failover}")


# --------------------------------------------------------------------------- report


def percentile(sorted_values: list[float], fraction: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * fraction))]


def figures(soak: Soak, groups: list[Group], elapsed: float) -> dict[str, Any]:
    tally, stats = soak.tally, soak.emu.stats
    answered = sorted(t.latency for t in tally.taps if t.latency is not None)
    lost = [t for t in tally.taps if t.latency is None]
    calls = stats.total - stats.calls.get("getUpdates", 0)
    moves = max(1, tally.moves)
    errors = [r for r in tally.faults if isinstance(r, InjectedError)]

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000, 1)

    return {
        "options": {
            k: str(v) if isinstance(v, Path) else v for k, v in asdict(soak.options).items()
        },
        "elapsed_s": round(elapsed, 1),
        "moves": tally.moves,
        "moves_per_s": round(tally.moves / elapsed, 2),
        "bot_api_calls": calls,
        "calls_per_move": round(calls / moves, 2),
        "calls_by_method": dict(sorted(stats.calls.items())),
        "too_many_requests": stats.too_many_requests,
        "bot_api_errors": {str(k): v for k, v in sorted(stats.errors.items())},
        "taps": len(tally.taps),
        "taps_unanswered": len(lost),
        "taps_lost_in_killed_workers": sum(taken_by_dead(soak, t) for t in lost),
        "tap_answer_p50_ms": ms(statistics.median(answered) if answered else None),
        "tap_answer_p99_ms": ms(percentile(answered, 0.99)),
        "tap_answer_max_ms": ms(answered[-1] if answered else None),
        "toasts": dict(tally.toasts.most_common(6)),
        "games_started": tally.games_started,
        "games_finished": sum(len(g.finished) for g in groups),
        "games_checked": tally.games_checked,
        "leftover_hands": tally.leftovers,
        "messages_compared": tally.compared,
        "kills": len(tally.kills),
        "failover": tally.failover,
        "faults": {
            "rules": len(tally.faults),
            "failed_calls": sum(r.hits for r in errors),
            "late_answers": sum(r.hits for r in tally.faults if r not in errors),
            "each": [describe_fault(rule) for rule in tally.faults],
        },
        "checks": {name: not any(c == name for c, _ in tally.failures) for name in CHECKS},
        "failures": [f"{check}: {problem}" for check, problem in tally.failures],
    }


def report(result: dict[str, Any]) -> None:
    options = result["options"]
    print()
    print(
        f"chaos soak: {options['groups']} groups, {options['workers']} workers, Redis Cluster, "
        f"{options['seconds']:.0f} s of chaos + drain = {result['elapsed_s']} s; bot tree "
        f"{options['bot_tree']}"
    )
    print(
        f"moves {result['moves']} ({result['moves_per_s']}/s); Bot API calls per move "
        f"{result['calls_per_move']}; 429s {result['too_many_requests']}; "
        f"errors by code {result['bot_api_errors']}"
    )
    print(
        f"taps {result['taps']}: tap -> answer p50 {result['tap_answer_p50_ms']} ms, "
        f"p99 {result['tap_answer_p99_ms']} ms, max {result['tap_answer_max_ms']} ms; "
        f"unanswered {result['taps_unanswered']} "
        f"({result['taps_lost_in_killed_workers']} taken by a worker then killed)"
    )
    print(
        f"games started {result['games_started']}, finished {result['games_finished']}, "
        f"checked {result['games_checked']} ({result['messages_compared']} messages equal "
        f"to their record); leftover hands {result['leftover_hands']}"
    )
    faults = result["faults"]
    print(
        f"kills {result['kills']}; failover {result['failover'] or 'none'}; faults: "
        f"{faults['rules']} rules, {faults['failed_calls']} calls failed, "
        f"{faults['late_answers']} answered late"
    )
    print("  " + "; ".join(faults["each"]))
    print(f"toasts: {result['toasts']}")
    for name, ok in result["checks"].items():
        print(f"  [{'ok' if ok else 'FAILED'}] {CHECKS[name]}")
    for failure in result["failures"][:30]:
        print(f"    {failure}")
    print(f"worker logs: {result['log_dir']}")


def parse(argv: list[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = Options()
    for name, value in asdict(default).items():
        flag = "--" + name.replace("_", "-")
        if name in ("bot_tree", "log_dir", "json"):
            parser.add_argument(flag, type=Path, default=value)
        elif name == "failover":
            parser.add_argument(flag, choices=("manual", "kill", "none"), default=value)
        elif name == "deck":
            parser.add_argument(flag, type=int, choices=sorted(DECK_PRESSES), default=value)
        else:
            kind = float if isinstance(value, float) or value is None else int
            parser.add_argument(flag, type=kind, default=value)
    options = Options(**vars(parser.parse_args(argv)))
    options.bot_tree = options.bot_tree.resolve()
    return options


def main() -> None:
    options = parse()
    result = asyncio.run(run(options))
    report(result)
    if options.json is not None:
        options.json.write_text(json.dumps(result, indent=2) + "\n")
    sys.exit(0 if all(result["checks"].values()) else 1)


if __name__ == "__main__":
    main()
