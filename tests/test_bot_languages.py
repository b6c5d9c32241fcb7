"""Issues 5 and 11: the bot speaks Spanish, German, Portuguese, Russian and Ukrainian, with
no English left over.

A whole game per language runs through the Bot API emulator: the first command in a new
group, the lobby with its "how to play", computer seats, options, the game played to
the end from the hand buttons, then /stats, /rules, /help and /language. Every version of
every group message (sent or edited), every button label, every toast and every message
of the player's private chat is then checked for English words. The English words are
taken from the English catalogues themselves, so the check grows with the bot.
"""

from __future__ import annotations

import gettext
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from support.deals import fix_deals
from support.harness import Harness, play_out, press

from bot.app import ids as game_ids
from bot.domain import callbacks
from bot.domain.callbacks import GroupOp
from bot.domain.flow import TIMEOUTS_BEFORE_HANDOVER
from bot.domain.lobby_options import OPTIONS_BY_OP
from bot.domain.place import Place
from bot.domain.records import Seat
from bot.render.common import button_names, computer_name
from bot.store.storage import table_key
from bot.wiring.application import GROUP_COMMANDS, PRIVATE_COMMANDS, publish_commands
from engine import Rules
from locales import (
    DEFAULT,
    SUPPORTED,
    language_name,
    rules_short,
    rules_text,
    translator,
    visible_text,
)
from locales.i18n import DOMAINS, load_catalog, message_texts

pytestmark = pytest.mark.filterwarnings("ignore:Deprecated since version v22.2")

GROUP = -100900
PLAYER = 21
OTHERS = tuple(lang for lang in SUPPORTED if lang != DEFAULT)

# Words every language shares: the game's name, Telegram, the Russian variant names.
SHARED = {"durak", "telegram", "podkidnoy", "perevodnoy"}
MIN_LETTERS = 3

# The labels of every button the bot makes, by message id.
BUTTONS = (
    "lobby.join",
    "lobby.leave",
    "lobby.ai_easy",
    "lobby.ai_normal",
    "lobby.ai_hard",
    "lobby.remove_ai",
    "lobby.deck",
    "lobby.throw_in",
    "lobby.transfer",
    "lobby.series",
    "lobby.pace",
    "lobby.start",
    "lobby.cancel",
    "lobby.open_dm",
    "table.my_cards",
    "result.next_game",
    "result.new_game",
    "hand.leave",
    "hand.leave_yes",
    "hand.back",
    "hand.take",
    "hand.pass",
    "hand.beat_target",
    "hand.beat_with",
    "hand.transfer",
    "hand.swap",
    "hand.beat_pick",
    "hand.transfer_to",
    "hand.swap_for",
    "hand.attack_cards",
    "hand.done",
    "result.rematch",
    "result.new_lobby",
    "rules.full_button",
    "rules.button.goal",
    "rules.button.bout",
    "rules.button.beating",
    "rules.button.taking",
    "rules.button.options",
    "rules.button.ending",
    "lobby.options_button",
    "lobby.options_back",
    "lobby.cancel_yes",
    "lobby.cancel_no",
    "lobby.option_deck",
    "lobby.option_throw_in",
    "lobby.option_transfer",
    "lobby.option_series",
    "lobby.option_partners",
    "lobby.option_pace",
    "review.button",
    "settings.button_rating",
)
# The options screen's value buttons: a value's text or a number, the current one marked.
VALUES = (
    "option.on",
    "option.off",
    "option.throw_in_all",
    "option.throw_in_neighbours",
    "option.pace_relaxed",
    "option.pace_normal",
    "option.pace_fast",
)
NUMBER_VALUE = re.compile(r"(?:✓ )?\d+")
RANK = r"(?:10|[2-9]|[A-ZА-ЯЁ])"
SUIT = "[♠♥♦♣]\ufe0f?"  # red suits carry the emoji selector (issue 11)
CARD = re.compile(rf"(?<!\w)({RANK}){SUIT}")
CARDS_ONLY = re.compile(rf"{RANK}{SUIT}(?: {RANK}{SUIT})*")
FACE_RANKS = {"en": "JQKA", "es": "JQKA", "pt": "JQKA", "de": "BDKA", "ru": "ВДКТ", "uk": "ВДКТ"}


# --- the English words -----------------------------------------------------------------


DEAL_TOKENS = re.compile(
    r"\bdeal\s+v\d+\s+p\d+(?:\s+[0-9A-Za-z]+){3}|(?:[0-9a-f]{4} ){7}[0-9a-f]{4}"
)
"""A deal's reveal and its code (``engine.commitment``): the same ASCII in every language."""


def tokens(text: str) -> list[str]:
    """The words of a visible text; commands such as /newgame are the same everywhere, and
    so are a deal's code and reveal."""
    return re.findall(r"[^\W\d_]+", re.sub(r"/\w+", " ", DEAL_TOKENS.sub(" ", text)))


@cache
def catalogue_words(lang: str) -> frozenset[str]:
    """Every word (lower case) of a language's catalogues, placeholders left out."""
    out: set[str] = set()
    for domain in DOMAINS:
        for forms in message_texts(lang, domain).values():
            for form in forms:
                plain = visible_text(re.sub(r"\{\w*\}", " ", form))
                out.update(w.lower() for w in tokens(plain))
    return frozenset(out)


@cache
def english_words(lang: str) -> frozenset[str]:
    """Words of the English texts that ``lang`` does not use itself: an English leftover."""
    english = {w for w in catalogue_words(DEFAULT) if len(w) >= MIN_LETTERS}
    return frozenset(english - catalogue_words(lang) - SHARED)


def leftovers(lang: str, texts: Iterable[str]) -> dict[str, str]:
    """English words found in ``texts`` → the first text that holds each."""
    found: dict[str, str] = {}
    bad = english_words(lang)
    for text in texts:
        for word in tokens(text):
            # "AI" is two letters: English only (IA, KI in the other languages).
            if word.lower() in bad or word == "AI":
                found.setdefault(word if word == "AI" else word.lower(), text)
    return found


def catalogue_text(lang: str, key: str) -> tuple[str, ...]:
    """The forms of message ``key`` in ``lang``, from whichever domain holds it."""
    return next(texts[key] for d in DOMAINS if key in (texts := message_texts(lang, d)))


def template(lang: str, key: str) -> re.Pattern[str]:
    """A message as a pattern: its placeholders match anything."""
    text = visible_text(catalogue_text(lang, key)[0])
    return re.compile(".+".join(re.escape(part) for part in re.split(r"\{\w+\}", text)))


def value_label(lang: str, key: str) -> re.Pattern[str]:
    """An option value's button on the options screen, marked or not."""
    return re.compile("(?:✓ )?" + re.escape(visible_text(catalogue_text(lang, key)[0])))


def wrong_labels(lang: str, labels: Iterable[str]) -> list[str]:
    """Button labels that are neither one of ``lang``'s button texts nor plain cards,
    or that match an English button text."""
    own = [template(lang, key) for key in BUTTONS] + [value_label(lang, k) for k in VALUES]
    english = [
        template(DEFAULT, key)
        for key in BUTTONS
        if catalogue_text(DEFAULT, key) != catalogue_text(lang, key)
    ] + [
        value_label(DEFAULT, k)
        for k in VALUES
        if catalogue_text(DEFAULT, k) != catalogue_text(lang, k)
    ]
    names = {language_name(code) for code in SUPPORTED}
    wrong = []
    for label in set(labels):
        if label in names or CARDS_ONLY.fullmatch(label) or NUMBER_VALUE.fullmatch(label):
            continue
        if not any(p.fullmatch(label) for p in own) or any(p.fullmatch(label) for p in english):
            wrong.append(label)
    return sorted(wrong)


# Plural messages of the group table: each shown count is checked against its form.
COUNTED = ("role.attacker", "role.defender", "role.player", "event.picked_up", "event.discarded")


def placeholder_pattern(piece: str) -> str:
    """A piece of a message as a pattern: {count} captures the number, other fields a word."""
    if piece == "{count}":
        return r"(?P<count>\d+)"
    return r"\S+" if piece.startswith("{") else re.escape(piece)


def plural_forms_shown(lang: str, texts: Iterable[str]) -> list[tuple[int, int, int]]:
    """The counts the texts show in plural messages: sorted (count, form shown, expected).

    Forms with the same text (English "cards" for 0 and 2) count as the expected one."""
    rule = gettext.c2py(load_catalog(lang, "bot").plural_expr)
    found: set[tuple[int, int, int]] = set()
    for key in COUNTED:
        forms = [visible_text(form) for form in message_texts(lang, "bot")[key]]
        for index, form in enumerate(forms):
            pattern = "".join(placeholder_pattern(p) for p in re.split(r"(\{\w+\})", form))
            for text in texts:
                for match in re.finditer(rf"(?<![\w]){pattern}(?!\w)", text):
                    count = int(match.group("count"))
                    expected = rule(count)
                    shown_form = expected if forms[expected] == form else index
                    found.add((count, shown_form, expected))
    return sorted(found)


def test_plural_check_catches_a_wrong_form() -> None:
    ru = translator("ru")
    right = [ru.n("role.player", n) for n in (1, 3, 5, 21)] + [ru.n("event.discarded", 22)]
    assert [(c, e) for c, f, e in plural_forms_shown("ru", right) if f == e] == [
        (1, 0),
        (3, 1),
        (5, 2),
        (21, 0),
        (22, 1),
    ]
    wrong = plural_forms_shown("ru", ["Аня — 5 карты", "Боря — 21 карт · ходит"])
    assert wrong == [(5, 1, 2), (21, 2, 0)]


def test_the_english_word_list_catches_english() -> None:
    """The checks are not vacuous: English texts and labels fail them."""
    en = translator(DEFAULT)
    for lang in OTHERS:
        tr = translator(lang)
        words = english_words(lang)
        assert {"players", "cards", "trump", "game", "your"} <= words, lang
        assert not leftovers(lang, [visible_text(tr.t("lobby.hint")), tr.t("seat.ai_easy")])
        assert {"creator", "starts"} <= set(leftovers(lang, [visible_text(en.t("lobby.hint"))]))
        assert "AI" in leftovers(lang, [en.t("seat.ai_easy")])
        assert "game" in leftovers(lang, [tr.t("lobby.players", count=1, max=6) + " Game"])
        assert wrong_labels(lang, [tr.t("lobby.join"), tr.t("hand.take"), "10♥", "Q♠ Q♥"]) == []
        assert wrong_labels(
            lang, [en.t("lobby.join"), en.t("hand.beat_with", card="6♠", attack="7♠")]
        )


# --- the label rule (issue 11) ---------------------------------------------------------------

# A keyboard row of k buttons fits a 360-px phone if each label is at most 34 // k wide.
ROW_WIDTH = 34
# Languages whose labels were written for the rule (the others follow with issue 11's labels).
LABEL_RULE_LANGS = ("ru", "uk")


def label_width(label: str) -> int:
    """Width of a button label: an emoji counts as two characters, its selectors as none."""
    width = 0
    for i, char in enumerate(label):
        if char in "\ufe0f\u200d":
            continue
        emoji = ord(char) >= 0x1F000 or label[i + 1 : i + 2] == "\ufe0f"
        width += 2 if emoji else 1
    return width


def long_labels(messages: Iterable[dict[str, Any]]) -> list[tuple[str, int]]:
    """Labels wider than their row allows, with the allowed width."""
    return sorted(
        {
            (str(b["text"]), ROW_WIDTH // len(row))
            for m in messages
            for row in m["buttons"]
            for b in row
            if label_width(str(b["text"])) > ROW_WIDTH // len(row)
        }
    )


def test_label_width() -> None:
    assert label_width("Пас") == 3
    assert label_width("🤖 Средний") == 10
    assert label_width("⚠️ a") == 4
    assert label_width("10♥ на 10♠") == 10
    rows = [{"buttons": [[{"text": "Сесть за стол"}, {"text": "Подкидывают: соседи"}]]}]
    assert long_labels(rows) == [("Подкидывают: соседи", 17)]


@pytest.mark.parametrize("lang", SUPPORTED)
def test_the_buttons_that_say_what_they_do_fit_in_every_language(lang: str) -> None:
    """The widest of each: a red ten (4 wide); the swap gives the deck's lowest trump (a
    six or a two) for the face-up card; two of these share a row (17 each). A lead of
    two cards does too, of four cards and a transfer naming the next defender have a
    row to themselves."""
    tr = translator(lang)
    red_ten = "10♥\ufe0f"
    halves = {
        "hand.beat_pick": tr.t("hand.beat_pick", card=red_ten),
        "hand.swap_for": tr.t("hand.swap_for", card="6♦\ufe0f", trump=red_ten),
        "hand.attack_cards": tr.t("hand.attack_cards", cards="10♥\ufe0f 10♦\ufe0f"),
        "hand.done": tr.t("hand.done"),
    }
    for key, label in halves.items():
        assert label_width(label) <= ROW_WIDTH // 2, (key, label)
    four = tr.t("hand.attack_cards", cards="10♠ 10♥\ufe0f 10♣ 10♦\ufe0f")
    computer = Seat(name="", ai="normal")
    longest_computer = max(button_names([computer] * 5, tr), key=label_width)
    transfer = tr.t("hand.transfer_to", card=red_ten, name=longest_computer)
    assert label_width(four) <= ROW_WIDTH and label_width(transfer) <= ROW_WIDTH, transfer
    # Each says what it does: a word, not just the cards (as an attack card's button is).
    for label in (*halves.values(), four, transfer):
        assert not CARDS_ONLY.fullmatch(label) and re.search(r"[^\W\d_]{2,}", label), label
    assert wrong_labels(lang, [*halves.values(), four, transfer]) == []


# --- reading the emulator -----------------------------------------------------------------


def versions(h: Harness, chat_id: int) -> list[dict[str, Any]]:
    """Every version of every bot message in the chat: as sent, then after each edit."""
    events = h.emu.chat_events(chat_id)
    return [
        e["message"]
        for e in events
        if e["type"] in ("message", "edit") and e["message"]["from_bot"]
    ]


def labels(messages: Iterable[dict[str, Any]]) -> list[str]:
    return [str(b["text"]) for m in messages for row in m["buttons"] for b in row]


def toasts(h: Harness, chat_id: int) -> list[str]:
    events = h.emu.chat_events(chat_id)
    return [str(e["text"]) for e in events if e["type"] == "callback_answer" and e["text"]]


def seen(h: Harness, chat_id: int) -> list[str]:
    """Everything the bot showed in a chat: texts, button labels and toasts."""
    events = h.emu.chat_events(chat_id)
    # The emulator keeps a chat's latest events only: make sure none were dropped.
    assert any(e["type"] == "message" and e["message"]["message_id"] == 1 for e in events)
    messages = versions(h, chat_id)
    return [m["text"] for m in messages] + labels(messages) + toasts(h, chat_id)


def shown(text: str) -> str:
    """What Telegram shows for one of our HTML texts."""
    return visible_text(text)


async def wait_new(h: Harness, chat_id: int, text: str, after: int) -> Any:
    """The first bot message newer than message ``after`` that contains ``text``."""

    def find() -> Any:
        for message in h.emu.messages(chat_id):
            if message.from_bot and message.message_id > after and text in message.text:
                return message
        return None

    return await h.emu.wait_for(find, 5, what=f"{text!r} in {chat_id}")


def last_id(h: Harness, chat_id: int) -> int:
    message = h.emu.last_message(chat_id)
    return message.message_id if message is not None else 0


async def press_ops(
    h: Harness, user: int, chat: int, message_id: int, ops: Iterable[GroupOp]
) -> None:
    """Move lobby options on by one value each, by what their buttons do (labels differ
    by language): open the options screen, tap each next value, go back."""
    game_id = (await h.table(chat)).game_id

    def shows(op: GroupOp) -> bool:
        message = h.emu.message(chat, message_id)
        data = [b.get("callback_data") for row in (message.buttons if message else []) for b in row]
        return callbacks.encode_group(game_id, op) in data

    await press(h, user, chat, message_id, data=callbacks.encode_group(game_id, "options"))
    await h.emu.wait_for(lambda: shows("options_back"), 5, what="the options screen")
    for op in ops:
        option = OPTIONS_BY_OP[op]
        values = option.values
        choice = (values.index(option.current(await h.table(chat))) + 1) % len(values)
        await press(h, user, chat, message_id, data=callbacks.encode_group(game_id, op, choice))
    await press(h, user, chat, message_id, data=callbacks.encode_group(game_id, "options_back"))
    await h.emu.wait_for(lambda: shows("start"), 5, what="the lobby's buttons")


async def wait_rules(
    h: Harness, chat_id: int, expected: list[str], after: int, *, short: str, reader: int
) -> None:
    """The short rules (HTML) arrived in ``chat_id`` after ``after``; ``reader`` taps its
    button and ``expected`` (the full rules) follows as consecutive messages."""
    brief = await h.emu.wait_for(
        lambda: next(
            (
                m
                for m in h.emu.messages(chat_id)
                if m.message_id > after and m.from_bot and m.text == shown(short)
            ),
            None,
        ),
        5,
        what=f"the short rules in {chat_id}",
    )
    after = last_id(h, chat_id)
    data = brief.buttons[0][0]["callback_data"]
    await press(h, reader, chat_id, brief.message_id, data=data)
    want = [shown(text) for text in expected]

    def arrived() -> bool:
        texts = [m.text for m in h.emu.messages(chat_id) if m.message_id > after and m.from_bot]
        return any(texts[i : i + len(want)] == want for i in range(len(texts)))

    await h.emu.wait_for(arrived, 5, what=f"the rules in {chat_id}")


# --- a whole game in each language --------------------------------------------------------


@dataclass(frozen=True)
class Scene:
    language_code: str
    name: str
    title: str
    options: tuple[GroupOp, ...]
    rules: Rules


SCENES = {
    "es": Scene("es-AR", "Lucía Pérez", "Mesa de los viernes", ("series",), Rules(series_length=3)),
    "de": Scene(
        "de",
        "Jürgen Vogt",
        "Skatrunde",
        ("transfer", "deck", "deck"),
        Rules(variant="perevodnoy", deck_size=24),
    ),
    "pt": Scene(
        "pt-BR", "João Moura", "Turma do truco", ("throw_in",), Rules(throw_in="neighbours")
    ),
    "ru": Scene(
        "ru",
        "Алёна Соколова",
        "Дурак по пятницам",
        ("transfer", "throw_in", "series"),
        Rules(variant="perevodnoy", throw_in="neighbours", series_length=3),
    ),
    "uk": Scene(
        "uk",
        "Оксана Ковальчук",
        "Підкидний у суботу",
        ("deck", "deck"),
        Rules(deck_size=24),
    ),
}


@pytest.mark.parametrize("lang", OTHERS)
async def test_a_whole_game_has_no_english_left(
    make_harness: Any, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    scene = SCENES[lang]
    tr = translator(lang)
    # Fixed game ids: the same deal and the same computer moves on every run.
    ids = (f"{lang}{n:04d}" for n in itertools.count())
    monkeypatch.setattr(game_ids, "new_game_id", lambda: next(ids))
    fix_deals(monkeypatch)
    async with make_harness() as h:
        h.emu.add_user(PLAYER, scene.name, language_code=scene.language_code)
        h.emu.add_group(GROUP, scene.title, members=[PLAYER], creator=PLAYER)
        await h.start_bot()

        # The private chat is in the player's language.
        await h.emu.user_starts_bot(PLAYER)
        await h.wait_text(PLAYER, shown(tr.t("start.private")))

        # The first command in the new group sets the group's language.
        await h.emu.user_sends(PLAYER, GROUP, "/newgame")
        lobby = await h.wait_text(GROUP, shown(tr.t("lobby.title")))
        assert (await h.games.storage.chat_settings(GROUP)).lang == lang
        assert shown(tr.t("rules.howto")) in lobby.text
        await press_ops(h, PLAYER, GROUP, lobby.message_id, scene.options)
        await press(h, PLAYER, GROUP, lobby.message_id, text=tr.t("lobby.ai_easy"))
        await press(h, PLAYER, GROUP, lobby.message_id, text=tr.t("lobby.ai_normal"))
        await h.wait_text(GROUP, "3. " + computer_name("normal", 1, tr))
        answer = await press(h, PLAYER, GROUP, lobby.message_id, text=tr.t("lobby.join"))
        assert answer.text == tr.t("lobby.already_joined")
        table = await h.table(GROUP)
        assert table.rules == scene.rules

        await press(h, PLAYER, GROUP, lobby.message_id, text=tr.t("lobby.start"))
        await h.wait_text(PLAYER, shown(tr.t("hand.header", group=scene.title)))
        mark = last_id(h, GROUP)
        await h.emu.user_sends(PLAYER, GROUP, "/newgame")
        await wait_new(h, GROUP, shown(tr.t("newgame.running")), mark)
        result = await play_out(h, GROUP, [PLAYER], game_over=shown(tr.t("result.title")))
        if scene.rules.series_length > 1:
            # The next game of the series opens a new lobby.
            next_game = tr.t("result.next_game")
            await press(h, PLAYER, GROUP, result.message_id, text=next_game)
            progress = tr.t("lobby.series_progress", game=2, total=scene.rules.series_length)
            await h.wait_text(GROUP, shown(progress))

        # /rules in the group: a note there, the rules of this table in the private chat.
        mark, dm_mark = last_id(h, GROUP), last_id(h, PLAYER)
        await h.emu.user_sends(PLAYER, GROUP, "/rules")
        await wait_new(h, GROUP, shown(tr.t("rules.sent_dm", name=scene.name)), mark)
        expected = rules_text(scene.rules, lang, turn_timeout=60, max_timeouts=3)
        assert (await h.table(GROUP)).rules == scene.rules
        short = rules_short(scene.rules, lang)
        await wait_rules(h, PLAYER, expected, dm_mark, short=short, reader=PLAYER)
        # /rules in private: the default game (no game is running).
        dm_mark = last_id(h, PLAYER)
        await h.emu.user_sends(PLAYER, PLAYER, "/rules")
        default = rules_text(Rules(), lang, turn_timeout=60)
        await wait_rules(
            h, PLAYER, default, dm_mark, short=rules_short(Rules(), lang), reader=PLAYER
        )

        for command, reply in (
            ("/stats", tr.t("stats.title")),
            ("/help", tr.t("help.text")),
            ("/start", tr.t("start.group")),
        ):
            mark = last_id(h, GROUP)
            await h.emu.user_sends(PLAYER, GROUP, command)
            await wait_new(h, GROUP, shown(reply), mark)
        mark = last_id(h, GROUP)
        await h.emu.user_sends(PLAYER, GROUP, "/language")
        picker = await wait_new(h, GROUP, shown(tr.t("language.pick")), mark)
        await press(h, PLAYER, GROUP, picker.message_id, text=language_name(lang))
        await h.wait_text(GROUP, shown(tr.t("language.set", language=language_name(lang))))
        for command in ("/stats", "/help", "/language"):
            mark = last_id(h, PLAYER)
            await h.emu.user_sends(PLAYER, PLAYER, command)
            await h.emu.wait_for(
                lambda mark=mark: any(
                    m.from_bot and m.message_id > mark for m in h.emu.messages(PLAYER)
                )
            )
        await h.settle()

        group_texts, dm_texts = seen(h, GROUP), seen(h, PLAYER)
        assert leftovers(lang, group_texts) == {}, "English in the group"
        assert leftovers(lang, dm_texts) == {}, "English in the private chat"

        # Buttons: only this language's labels (and cards), never the English ones.
        group_labels, dm_labels = labels(versions(h, GROUP)), labels(versions(h, PLAYER))
        assert wrong_labels(lang, group_labels + dm_labels) == []
        for key in ("lobby.join", "lobby.start", "lobby.ai_hard", "lobby.cancel"):
            assert tr.t(key) in group_labels
        assert tr.t("table.my_cards") in group_labels
        assert {tr.t("hand.leave"), tr.t("hand.take"), tr.t("hand.done")} <= set(dm_labels)
        if lang in LABEL_RULE_LANGS:
            assert long_labels(versions(h, GROUP) + versions(h, PLAYER)) == []

        # Cards carry this language's rank letters (German B, D, K, A; Russian В, Д, К, Т).
        ranks = {m.group(1) for text in group_texts + dm_texts for m in CARD.finditer(text)}
        faces = {r for r in ranks if r.isalpha()}
        assert faces and faces <= set(FACE_RANKS[lang]), faces

        # Every count on the table has the plural form of its number (Russian: 1 карта,
        # 3 карты, 5 карт, 21 карта), and the game showed more than one form.
        counted = plural_forms_shown(lang, group_texts)
        assert all(form == expected for _, form, expected in counted), counted
        assert len({form for _, form, _ in counted}) >= 2, counted


# --- who decides the language -------------------------------------------------------------

AMELIE, GRETA, RITA, NOAH, PABLO = 31, 32, 33, 34, 35
FIRST, SECOND = -100901, -100902


def people(h: Harness) -> None:
    h.emu.add_user(AMELIE, "Amélie", language_code="fr")  # not supported: English
    h.emu.add_user(GRETA, "Greta", language_code="de-AT")
    h.emu.add_user(RITA, "Rita", language_code="pt-br")
    h.emu.add_user(NOAH, "Noah", language_code=None)  # Telegram sent none: English
    h.emu.add_user(PABLO, "Pablo", language_code="es")


async def test_groups_take_the_first_callers_language_and_dms_the_users(
    make_harness: Any,
) -> None:
    en, de, pt, es = (translator(lang) for lang in ("en", "de", "pt", "es"))
    async with make_harness() as h:
        people(h)
        h.emu.add_group(FIRST, "Club", members=[AMELIE, GRETA, PABLO], creator=AMELIE)
        h.emu.add_group(SECOND, "Clube", members=[RITA, GRETA], creator=RITA)
        await h.start_bot()

        # Private chats: the user's own Telegram language, else English.
        for user, tr in ((GRETA, de), (AMELIE, en), (NOAH, en), (RITA, pt), (PABLO, es)):
            await h.emu.user_starts_bot(user)
            await h.wait_text(user, shown(tr.t("start.private")))

        # A new group: the language of whoever sends the first command, if supported.
        await h.emu.user_sends(AMELIE, FIRST, "/help")
        await h.wait_text(FIRST, shown(en.t("help.text")))
        await h.emu.user_sends(RITA, SECOND, "/start")
        await h.wait_text(SECOND, shown(pt.t("start.group")))
        await h.emu.user_sends(GRETA, SECOND, "/help")  # a later caller changes nothing
        await h.wait_text(SECOND, shown(pt.t("help.text")))
        assert (await h.games.storage.chat_settings(FIRST)).lang == "en"
        assert (await h.games.storage.chat_settings(SECOND)).lang == "pt"

        # /language in a group: its admins may; other members, the lobby creator too, not.
        await h.emu.user_sends(GRETA, FIRST, "/newgame")
        lobby = await h.wait_text(FIRST, shown(en.t("lobby.title")))
        await h.emu.user_sends(GRETA, FIRST, "/language")
        picker = await h.wait_text(FIRST, shown(en.t("language.pick")))
        assert labels([picker.to_dict()]) == [language_name(lang) for lang in SUPPORTED]
        answer = await press(h, PABLO, FIRST, picker.message_id, text="Español")
        assert answer.text == es.t("toast.only_admin_language")  # a toast in Pablo's language
        answer = await press(h, GRETA, FIRST, picker.message_id, text="Español")
        assert answer.text == de.t("toast.only_admin_language")  # Greta opened the lobby
        answer = await press(h, AMELIE, FIRST, picker.message_id, text="Deutsch")
        assert answer.text is None
        await h.wait_text(FIRST, shown(de.t("language.set", language="Deutsch")))
        assert (await h.games.storage.chat_settings(FIRST)).lang == "de"

        def lobby_in_german() -> bool:
            current = h.emu.message(FIRST, lobby.message_id)
            return current is not None and shown(de.t("lobby.title")) in current.text

        await h.emu.wait_for(lobby_in_german, what="the lobby in German")
        current = h.emu.message(FIRST, lobby.message_id)
        assert current is not None and de.t("lobby.join") in current.button_texts

        # /language in private: the user's own choice wins over Telegram's language,
        # for private messages and for the toasts only they see.
        await h.emu.user_sends(AMELIE, AMELIE, "/language")
        picker = await h.wait_text(AMELIE, shown(en.t("language.pick")))
        await press(h, AMELIE, AMELIE, picker.message_id, text="Español")
        await h.wait_text(AMELIE, shown(es.t("language.set", language="Español")))
        mark = last_id(h, AMELIE)
        await h.emu.user_sends(AMELIE, AMELIE, "/start")
        await wait_new(h, AMELIE, shown(es.t("start.private")), mark)
        answer = await press(h, AMELIE, FIRST, lobby.message_id, text=de.t("lobby.join"))
        assert answer.text == es.t("toast.joined")
        assert (await h.games.storage.chat_settings(FIRST)).lang == "de"


async def test_the_guards_answers_follow_the_tappers_language(make_harness: Any) -> None:
    """A tap on a game Redis lost is answered before any handler runs; that answer
    used to ignore /language and speak the tapper's Telegram language."""
    en, de, es = translator("en"), translator("de"), translator("es")
    async with make_harness() as h:
        people(h)
        h.emu.add_group(FIRST, "Club", members=[AMELIE, GRETA], creator=GRETA)
        await h.start_bot()
        await h.emu.user_starts_bot(AMELIE)
        await h.emu.user_sends(AMELIE, AMELIE, "/language")
        picker = await h.wait_text(AMELIE, shown(en.t("language.pick")))
        await press(h, AMELIE, AMELIE, picker.message_id, text="Español")
        await h.wait_text(AMELIE, shown(es.t("language.set", language="Español")))
        await h.emu.user_sends(GRETA, FIRST, "/newgame")
        lobby = await h.wait_text(FIRST, shown(de.t("lobby.title")))
        await h.redis.delete(table_key(Place(FIRST)))  # the game's record is gone, nothing else
        answer = await press(h, AMELIE, FIRST, lobby.message_id, text=de.t("lobby.join"))
        assert answer.text == es.t("toast.game_lost")  # before: English (Telegram's "fr")
        await h.wait_text(FIRST, shown(de.t("group.game_lost")))  # the group: its own


async def test_rules_follow_the_lobby_and_go_to_the_readers_private_chat(
    make_harness: Any,
) -> None:
    es, de = translator("es"), translator("de")
    lobby_rules = Rules(variant="perevodnoy", deck_size=24)
    async with make_harness() as h:
        people(h)
        h.emu.add_group(FIRST, "Club", members=[PABLO, GRETA, AMELIE], creator=PABLO)
        await h.start_bot()
        await h.emu.user_starts_bot(GRETA)
        await h.wait_text(GRETA, shown(de.t("start.private")))
        await h.emu.user_sends(PABLO, FIRST, "/newgame")
        lobby = await h.wait_text(FIRST, shown(es.t("lobby.title")))
        ops: tuple[GroupOp, ...] = ("transfer", "deck", "deck")
        await press_ops(h, PABLO, FIRST, lobby.message_id, ops)
        await h.wait_text(FIRST, es.t("lobby.deck", deck=24))
        assert (await h.table(FIRST)).rules == lobby_rules

        # Greta's private chat is open: a note in the group, the rules in German for her.
        mark, dm_mark = last_id(h, FIRST), last_id(h, GRETA)
        await h.emu.user_sends(GRETA, FIRST, "/rules")
        await wait_new(h, FIRST, shown(es.t("rules.sent_dm", name="Greta")), mark)
        expected = rules_text(
            lobby_rules, "de", turn_timeout=60, max_timeouts=TIMEOUTS_BEFORE_HANDOVER
        )
        short = rules_short(lobby_rules, "de")
        await wait_rules(h, GRETA, expected, dm_mark, short=short, reader=GRETA)
        assert expected != rules_text(Rules(), "de", turn_timeout=60)

        # Amélie never opened a private chat: the rules go to the group, in its language.
        mark = last_id(h, FIRST)
        await h.emu.user_sends(AMELIE, FIRST, "/rules")
        full = rules_text(lobby_rules, "es", turn_timeout=60)
        short = rules_short(lobby_rules, "es")
        await wait_rules(h, FIRST, full, mark, short=short, reader=AMELIE)


async def test_command_menus_in_every_language(make_harness: Any) -> None:
    async with make_harness() as h:
        bot = await h.start_bot()
        await publish_commands(bot.app)
        for scope, names in (
            ("all_group_chats", GROUP_COMMANDS),
            ("all_private_chats", PRIVATE_COMMANDS),
        ):
            english = [translator(DEFAULT).t(f"command.{name}") for name in names]
            assert h.emu.commands(scope_type=scope) == [
                {"command": name, "description": text}
                for name, text in zip(names, english, strict=True)
            ]
            for lang in SUPPORTED:
                tr = translator(lang)
                menu = h.emu.commands(scope_type=scope, language_code=lang)
                assert [c["command"] for c in menu] == list(names)
                descriptions = [c["description"] for c in menu]
                assert descriptions == [tr.t(f"command.{name}") for name in names]
                if lang != DEFAULT:
                    assert not set(descriptions) & set(english), lang
                    assert leftovers(lang, descriptions) == {}
