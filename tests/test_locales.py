"""The language layer: catalogues, plural rules, formatting, escaping and the rule texts.

The catalogue checks compare every language with English generically, so they keep
working as the bot adds messages.
"""

from __future__ import annotations

import gettext
import itertools
import re
from collections.abc import Callable, Iterator
from string import Formatter

import pytest
from babel import Locale
from babel.messages.catalog import Catalog

from engine import Card, Rules
from engine.cards import LOWEST_RANK
from engine.rules import FIRST_BOUT_MAX_CARDS, HAND_SIZE, MAX_BOUT_CARDS
from locales import (
    DEFAULT,
    MAX_MESSAGE_LENGTH,
    SUPPORTED,
    Html,
    MessageArgumentsError,
    Translator,
    UnknownMessageError,
    escape,
    how_to_play,
    language_name,
    negotiate,
    rules_text,
    split_messages,
    telegram_length,
    translator,
    visible_text,
)
from locales.i18n import (
    DOMAINS,
    catalogue_path,
    compile_catalog,
    load_catalog,
    message_index,
    message_texts,
)

OTHERS = tuple(lang for lang in SUPPORTED if lang != DEFAULT)
CATALOGUES = [(lang, domain) for lang in SUPPORTED for domain in DOMAINS]

# en, es, de, pt: only n == 1 is singular. For Portuguese this is the rule of Portugal;
# Brazil's usual gettext header, (n > 1), would say "0 carta" (see README).
TWO_FORMS = "nplurals=2; plural=(n != 1);"
# Russian and Ukrainian: one (1, 21, 101: "карта"), few (2-4, 22: "карты"), many (0, 5-20,
# 25: "карт"), the rule of the GNU gettext manual.
SLAVIC_FORMS = (
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && "
    "(n%100<10 || n%100>=20) ? 1 : 2);"
)
PLURAL_FORMS = {"en": TWO_FORMS, "es": TWO_FORMS, "de": TWO_FORMS, "pt": TWO_FORMS}
PLURAL_FORMS |= {"ru": SLAVIC_FORMS, "uk": SLAVIC_FORMS}
COUNTS = (0, 1, 2, 5, 11, 21, 22, 25)
TWO = {0: 1, 1: 0, 2: 1, 5: 1, 11: 1, 21: 1, 22: 1, 25: 1}
SLAVIC = {0: 2, 1: 0, 2: 1, 5: 2, 11: 2, 21: 0, 22: 1, 25: 2}
EXPECTED_FORM = {"en": TWO, "es": TWO, "de": TWO, "pt": TWO, "ru": SLAVIC, "uk": SLAVIC}
# CLDR's category of each of our forms, for whole numbers.
CLDR_CATEGORIES = {lang: ("one", "other") for lang in ("en", "es", "de", "pt")}
CLDR_CATEGORIES |= {"ru": ("one", "few", "many"), "uk": ("one", "few", "many")}

ALLOWED_TAGS = {"b", "i", "code"}
FIELD_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def all_rules() -> Iterator[Rules]:
    for deck, variant, throw_in, multi, first, swap, series in itertools.product(
        (24, 36, 52),
        ("podkidnoy", "perevodnoy"),
        ("all", "neighbours"),
        (True, False),
        (True, False),
        (True, False),
        (1, 3, 5, 10),
    ):
        yield Rules(
            deck_size=deck,
            variant=variant,
            throw_in=throw_in,
            multi_card_lead=multi,
            first_bout_limit=first,
            trump_swap=swap,
            series_length=series,
        )


def check_html(text: str) -> None:
    """Telegram HTML as we use it: only <b>, <i>, <code>, balanced; '&' only in entities."""
    stack: list[str] = []
    for match in re.finditer(r"<(/?)([^<>]*)>", text):
        closing, name = match.group(1) == "/", match.group(2)
        assert name in ALLOWED_TAGS, f"tag <{closing and '/'}{name}> in {text!r}"
        if closing:
            assert stack and stack.pop() == name, f"unbalanced </{name}> in {text!r}"
        else:
            stack.append(name)
    assert not stack, f"unclosed <{stack[-1]}> in {text!r}"
    bare = re.sub(r"<(/?)([^<>]*)>", "", text)
    assert "<" not in bare and ">" not in bare, f"unescaped angle bracket in {text!r}"
    assert not re.search(r"&(?!(lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);)", bare), text


def plural_function(lang: str, domain: str) -> tuple[int, Callable[[int], int]]:
    catalog = load_catalog(lang, domain)
    return catalog.num_plurals, gettext.c2py(catalog.plural_expr)


# --- catalogues ------------------------------------------------------------------------


@pytest.mark.parametrize(("lang", "domain"), CATALOGUES)
def test_catalogue_header(lang: str, domain: str) -> None:
    with open(catalogue_path(lang, domain), encoding="utf-8") as fileobj:
        head = fileobj.read().split("\n\n", 1)[0]
    assert f'"Language: {lang}\\n"' in head
    assert f'"Plural-Forms: {PLURAL_FORMS[lang]}\\n"' in head
    assert '"Content-Type: text/plain; charset=utf-8\\n"' in head
    catalog = load_catalog(lang, domain)
    assert isinstance(catalog, Catalog)
    assert catalog.num_plurals == len(CLDR_CATEGORIES[lang])


@pytest.mark.parametrize("domain", DOMAINS)
def test_english_is_complete(domain: str) -> None:
    for message in load_catalog(DEFAULT, domain):
        if not message.id:
            continue
        assert not message.fuzzy, f"fuzzy English message {message.id!r}"
        if isinstance(message.id, tuple):
            assert message.id[0] == message.id[1], f"msgid_plural must repeat the key: {message.id}"
            assert isinstance(message.string, tuple) and len(message.string) == 2
            assert all(message.string), f"empty English form in {message.id[0]!r}"
        else:
            assert message.string, f"empty English text for {message.id!r}"
    assert set(message_texts(DEFAULT, domain)) == {
        key for key, info in message_index().items() if info.domain == domain
    }


def test_domains_do_not_share_keys() -> None:
    keys = {d: set(message_texts(DEFAULT, d)) for d in DOMAINS}
    for a, b in itertools.combinations(DOMAINS, 2):
        assert not keys[a] & keys[b], f"{a} and {b} share {sorted(keys[a] & keys[b])}"
    assert all(key.startswith("rules.") for key in keys["rules"])
    assert DOMAINS[:2] == ("bot", "rules")


@pytest.mark.parametrize(("lang", "domain"), CATALOGUES)
def test_same_keys_and_placeholders_as_english(lang: str, domain: str) -> None:
    english = message_texts(DEFAULT, domain)
    texts = message_texts(lang, domain)
    assert sorted(set(english) - set(texts)) == [], f"untranslated in {lang}/{domain}.po"
    assert sorted(set(texts) - set(english)) == [], f"not in the English {domain}.po"
    nplurals, plural = plural_function(lang, domain)
    # Plural forms used for n == 1 only may leave out {count} ("one card").
    singles = {i for i in range(nplurals) if {n for n in range(200) if plural(n) == i} == {1}}
    for key, forms in texts.items():
        info = message_index()[key]
        assert info.plural == (len(english[key]) > 1)
        assert len(forms) == (nplurals if info.plural else 1), f"{lang} {key}: forms"
        for i, form in enumerate(forms):
            fields = Formatter().parse(form)
            names = {name for _, name, _, _ in fields if name is not None}
            assert all(FIELD_NAME.fullmatch(name) for name in names), f"{lang} {key}: {names}"
            expected = set(info.fields)
            if info.plural and i in singles:
                names |= {"count"} & expected
            assert names == expected, f"{lang} {key} form {i}: {sorted(names)} != {expected}"


@pytest.mark.parametrize(("lang", "domain"), [(lang, d) for lang in OTHERS for d in DOMAINS])
def test_longer_messages_are_translated(lang: str, domain: str) -> None:
    """A text of three or more real words that equals the English one was not translated."""
    english = message_texts(DEFAULT, domain)
    for key, forms in message_texts(lang, domain).items():
        for mine, theirs in zip(forms, english[key], strict=False):
            if len(re.findall(r"[^\W\d_]{3,}", visible_text(re.sub(r"\{\w+\}", "", theirs)))) >= 3:
                assert mine != theirs, f"{lang} {key} is still English: {mine!r}"


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_message_formats(lang: str) -> None:
    tr = translator(lang)
    for key, info in message_index().items():
        fields = info.fields - {"count"} if info.plural else info.fields
        dummy: dict[str, str | int] = {name: "x" for name in fields}
        outputs = [tr.n(key, c, **dummy) for c in COUNTS] if info.plural else [tr.t(key, **dummy)]
        for text in outputs:
            assert isinstance(text, Html) and text.strip(), f"{lang} {key}"
            assert not re.search(r"\{\w*\}", text), f"{lang} {key}: unfilled field in {text!r}"
            check_html(text)
            if info.plural and "count" in info.fields:
                assert any(str(c) in text for c in COUNTS)


# --- plural rules ----------------------------------------------------------------------


@pytest.mark.parametrize("lang", SUPPORTED)
def test_plural_forms(lang: str) -> None:
    tr = translator(lang)
    forms = message_texts(lang, "bot")["common.cards"]
    for domain in DOMAINS:
        _, plural = plural_function(lang, domain)
        assert {c: plural(c) for c in COUNTS} == EXPECTED_FORM[lang]
    for count in COUNTS:
        expected = forms[EXPECTED_FORM[lang][count]].format(count=count)
        assert tr.n("common.cards", count) == expected
    # Counts with the same form differ only in the number, other forms in the words too.
    for a, b in itertools.combinations(COUNTS, 2):
        same = EXPECTED_FORM[lang][a] == EXPECTED_FORM[lang][b]
        renamed = tr.n("common.cards", b).replace(str(b), str(a), 1)
        assert (tr.n("common.cards", a) == renamed) == same, (lang, a, b)


@pytest.mark.parametrize("lang", SUPPORTED)
def test_plural_forms_agree_with_cldr_for_whole_numbers(lang: str) -> None:
    cldr = Locale.parse(lang).plural_form
    for count in (*COUNTS, 3, 4, 12, 14, 100, 101, 104, 111, 1000):
        form = plural_function(lang, "bot")[1](count)
        category = CLDR_CATEGORIES[lang][form]
        if lang == "pt" and count == 0:
            # CLDR's Portuguese (Brazil) puts 0 with 1; we use the plural ("0 cartas").
            assert cldr(count) == "one" and category == "other"
            continue
        assert cldr(count) == category, (lang, count)


def test_english_counts() -> None:
    tr = translator("en")
    assert [tr.n("common.cards", c) for c in (0, 1, 2, 5, 21)] == [
        "0 cards",
        "1 card",
        "2 cards",
        "5 cards",
        "21 cards",
    ]
    assert translator("pt").n("common.cards", 0) == "0 cartas"
    assert translator("de").n("common.cards", 1) == "1 Karte"


def test_russian_counts() -> None:
    tr = translator("ru")
    cards = [tr.n("common.cards", c) for c in (1, 2, 5, 11, 21, 22, 25, 0, 111, 104)]
    assert cards == [
        "1 карта",
        "2 карты",
        "5 карт",
        "11 карт",
        "21 карта",
        "22 карты",
        "25 карт",
        "0 карт",
        "111 карт",
        "104 карты",
    ]
    # Case follows the verb: "забирает 21 карту" (accusative), "на ход: 22 секунды".
    picked = [tr.n("event.picked_up", c, name="Аня") for c in (1, 21, 22, 25)]
    assert picked == [
        "Аня забирает 1 карту",
        "Аня забирает 21 карту",
        "Аня забирает 22 карты",
        "Аня забирает 25 карт",
    ]
    timer = [tr.n("rules.options.timer", c) for c in (1, 2, 5, 11, 21)]
    assert [line.rsplit(" ", 1)[1] for line in timer] == [
        "секунда",
        "секунды",
        "секунд",
        "секунд",
        "секунда",
    ]
    assert tr.n("result.series_line", 3, name="Боря") == "Боря: дурак 3 раза"
    assert tr.n("rules.options.series.many", 5) == "• Длина: серия из 5 партий"


def test_ukrainian_counts() -> None:
    tr = translator("uk")
    cards = [tr.n("common.cards", c) for c in (1, 2, 5, 11, 21, 22, 25, 0)]
    assert cards == [
        "1 карта",
        "2 карти",
        "5 карт",
        "11 карт",
        "21 карта",
        "22 карти",
        "25 карт",
        "0 карт",
    ]
    picked = [tr.n("event.picked_up", c, name="Оля") for c in (1, 21, 22, 25)]
    assert picked == [
        "Оля забирає 1 карту",
        "Оля забирає 21 карту",
        "Оля забирає 22 карти",
        "Оля забирає 25 карт",
    ]
    times = [tr.n("result.series_line", c, name="Тарас") for c in (1, 3, 5)]
    assert times == ["Тарас: дурень 1 раз", "Тарас: дурень 3 рази", "Тарас: дурень 5 разів"]


# --- formatting, escaping, errors -------------------------------------------------------


def test_string_arguments_are_escaped() -> None:
    tr = translator("en")
    text = tr.t("rules.bot.swap", rank="<b>Bob & Co</b>")
    assert "&lt;b&gt;Bob &amp; Co&lt;/b&gt;" in text
    assert "<b>Bob" not in text
    check_html(text)


def test_html_arguments_pass_through() -> None:
    tr = translator("en")
    text = tr.t("rules.bot.swap", rank=Html("<i>6</i>"))
    assert "<i>6</i>" in text
    nested = tr.t("rules.bot.swap", rank=tr.t("rules.options.swap.off"))
    assert tr.t("rules.options.swap.off") in nested
    assert escape("a < b & c") == "a &lt; b &amp; c"
    assert escape(Html("<b>x</b>")) == "<b>x</b>"
    assert isinstance(escape("x"), Html) and isinstance(Html("x"), str)


def test_int_arguments_are_formatted_as_is() -> None:
    tr = translator("de")
    assert tr.t("rules.options.players", min=2, max=4) == "• Spieler: 2 bis 4"


def test_argument_errors() -> None:
    tr = translator("es")
    with pytest.raises(MessageArgumentsError, match="missing: max"):
        tr.t("rules.options.players", min=2)
    with pytest.raises(MessageArgumentsError, match="unexpected: extra"):
        tr.t("rules.options.players", min=2, max=6, extra=1)
    with pytest.raises(MessageArgumentsError, match="must be str, Html or int"):
        tr.t("rules.options.players", min=2, max=6.0)  # type: ignore[arg-type]
    with pytest.raises(MessageArgumentsError, match="must be str, Html or int"):
        tr.t("rules.options.players", min=2, max=True)
    with pytest.raises(MessageArgumentsError, match="use n"):
        tr.t("common.cards", count=2)
    with pytest.raises(MessageArgumentsError, match="use t"):
        tr.n("rules.options.players", 2, min=2, max=6)
    with pytest.raises(MessageArgumentsError, match="count must be an int"):
        tr.n("common.cards", "2")  # type: ignore[arg-type]
    assert issubclass(MessageArgumentsError, TypeError)


def test_unknown_key_and_language() -> None:
    with pytest.raises(UnknownMessageError, match=r"no\.such\.key"):
        translator("pt").t("no.such.key")
    with pytest.raises(KeyError):
        translator("en").n("no.such.key", 3)
    with pytest.raises(ValueError, match="unsupported language"):
        translator("fr")
    with pytest.raises(ValueError, match="unsupported language"):
        Translator("xx")


def test_missing_or_fuzzy_translation_falls_back_to_english() -> None:
    english = compile_catalog(load_catalog(DEFAULT, "rules"), None)
    partial = Catalog(locale="es", domain="rules")
    partial.add("rules.options.swap.off", "• Cambio del triunfo: no")
    partial.add("rules.options.swap.on", "• sin revisar {rank}", flags=["fuzzy"])
    compiled = compile_catalog(partial, english)
    assert compiled.gettext("rules.options.swap.off") == "• Cambio del triunfo: no"
    assert compiled.gettext("rules.options.swap.on") == english.gettext("rules.options.swap.on")
    assert compiled.gettext("rules.end.draw") == english.gettext("rules.end.draw")
    assert "rules.end.draw" not in compiled.gettext("rules.end.draw")
    timer = compiled.ngettext("rules.options.timer", "rules.options.timer", 5)
    assert timer == english.ngettext("rules.options.timer", "rules.options.timer", 5)


# --- negotiation, names, cards ----------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "lang"),
    [
        ("pt-br", "pt"),
        ("pt-BR", "pt"),
        ("pt", "pt"),
        ("de", "de"),
        ("de-AT", "de"),
        ("es-419", "es"),
        ("es", "es"),
        ("en-GB", "en"),
        ("en", "en"),
        ("EN_us", "en"),
        (None, "en"),
        ("", "en"),
        ("ru", "ru"),
        ("ru-RU", "ru"),
        ("RU", "ru"),
        ("uk", "uk"),
        ("uk-UA", "uk"),
        ("be", "en"),
        ("zh-hans", "en"),
        ("e", "en"),
    ],
)
def test_negotiate(code: str | None, lang: str) -> None:
    assert negotiate(code) == lang


def test_language_names() -> None:
    assert [language_name(lang) for lang in SUPPORTED] == [
        "English",
        "Español",
        "Deutsch",
        "Português",
        "Русский",
        "Українська",
    ]
    with pytest.raises(ValueError):
        language_name("fr")


def test_cards() -> None:
    cards = [Card.parse(c) for c in ("10h", "Qc", "Js", "Kd", "Ah", "6s", "2c")]
    assert translator("en").cards(cards) == "10♥ Q♣ J♠ K♦ A♥ 6♠ 2♣"
    assert translator("de").cards(cards) == "10♥ D♣ B♠ K♦ A♥ 6♠ 2♣"
    assert translator("es").card(cards[1]) == "Q♣"
    assert translator("pt").card(cards[2]) == "J♠"
    # Russian cards show В (валет), Д (дама), К (король), Т (туз), in Cyrillic.
    assert translator("ru").cards(cards) == "10♥ Д♣ В♠ К♦ Т♥ 6♠ 2♣"
    assert translator("uk").cards(cards) == "10♥ Д♣ В♠ К♦ Т♥ 6♠ 2♣"
    assert translator("en").cards([]) == ""
    for lang in SUPPORTED:
        tr = translator(lang)
        for rank in range(2, 15):
            name = tr.rank(rank)
            assert 1 <= len(name) <= 2 and name.strip() == name, (lang, rank, name)
        assert len({tr.rank(rank) for rank in range(2, 15)}) == 13


def test_translator_is_cached() -> None:
    assert translator("de") is translator("de")
    assert translator("de").lang == "de"


# --- message length and splitting -------------------------------------------------------


def test_telegram_length_counts_visible_text() -> None:
    assert visible_text("<b>a &amp; b</b> &lt;3") == "a & b <3"
    assert telegram_length("<b>ab</b>") == len("<b>ab</b>")
    assert telegram_length("&amp;" * 10) == 50
    assert telegram_length("🃏") == 2  # UTF-16 code units


def test_split_messages() -> None:
    parts = ["<b>A</b>\n" + "a" * 50, "<b>B</b>\n" + "b" * 50, "<b>C</b>\n" + "c" * 50]
    assert split_messages(parts, limit=200) == ["\n\n".join(parts[:3])]
    assert split_messages(parts, limit=130) == ["\n\n".join(parts[:2]), parts[2]]
    long_part = "\n".join(["x" * 40] * 5)
    pieces = split_messages([long_part], limit=100)
    assert all(telegram_length(p) <= 100 for p in pieces) and len(pieces) == 3
    assert "\n".join(pieces) == long_part
    with pytest.raises(ValueError):
        split_messages(["y" * 101], limit=100)


# --- the rules text -----------------------------------------------------------------------


def expect(text: str, marker: str, present: bool, rules: Rules, lang: str) -> None:
    assert (marker in text) == present, f"{lang} {rules!r}: {marker!r} present={not present}"


@pytest.mark.parametrize("lang", SUPPORTED)
@pytest.mark.parametrize("deck", [24, 36, 52])
def test_rules_text_follows_every_option(lang: str, deck: int) -> None:
    tr = translator(lang)
    low = LOWEST_RANK[deck]
    for rules in all_rules():
        if rules.deck_size != deck:
            continue
        messages = rules_text(rules, lang)
        assert messages
        for message in messages:
            assert message.strip() and message.startswith("<b>")
            assert telegram_length(message) <= MAX_MESSAGE_LENGTH
            assert len(message) <= MAX_MESSAGE_LENGTH
            check_html(message)
        text = "\n".join(messages)

        def has(marker: str, present: bool = True, *, _text: str = text, _r: Rules = rules) -> None:
            expect(_text, marker, present, _r, lang)

        # Deck contents, rank order and the lowest trump.
        order = " ".join(tr.rank(r) for r in range(low, 15))
        has(tr.t("rules.options.deck", count=deck, low=tr.rank(low), ace=tr.rank(14)))
        has(f": {order}.")
        has(tr.t("rules.deal.first", rank=tr.rank(low)))
        has(tr.t("rules.options.players", min=2, max=rules.max_players))
        for d in (24, 36, 52):
            players = d // HAND_SIZE
            if players <= 6:
                has(tr.t("rules.deal.no_stock", players=players), d == deck)
        # Variant: transfers only in perevodnoy.
        transfer = rules.variant == "perevodnoy"
        has(tr.t("rules.options.variant.perevodnoy"), transfer)
        has(tr.t("rules.options.variant.podkidnoy"), not transfer)
        has(tr.t("rules.transfer.title"), transfer)
        has(tr.t("rules.transfer.condition"), transfer)
        has(tr.t("rules.bot.transfer"), transfer)
        # Who may throw in.
        for who in ("all", "neighbours"):
            has(tr.t(f"rules.options.throw_in.{who}"), rules.throw_in == who)
            has(tr.t(f"rules.bout.throw_in.{who}"), rules.throw_in == who)
        # Leading several cards.
        multi = rules.multi_card_lead
        has(tr.t("rules.options.multi_lead.on"), multi)
        has(tr.t("rules.options.multi_lead.off"), not multi)
        has(tr.t("rules.bout.lead.multi"), multi)
        has(tr.t("rules.bout.lead.single"), not multi)
        # Bout limits.
        first = bool(rules.first_bout_limit)  # "always" or "from_four_players"
        has(tr.t("rules.bout.limit", max=MAX_BOUT_CARDS))
        has(tr.t("rules.options.first_bout.on", first=FIRST_BOUT_MAX_CARDS), first)
        has(tr.t("rules.options.first_bout.off"), not first)
        has(tr.t("rules.bout.first_limit", first=FIRST_BOUT_MAX_CARDS), first)
        # Trump swap, with the right lowest trump of this deck.
        swap = rules.trump_swap
        for d in (24, 36, 52):
            rank = tr.rank(LOWEST_RANK[d])
            has(tr.t("rules.options.swap.on", rank=rank), swap and d == deck)
            has(tr.t("rules.swap.body", rank=rank), swap and d == deck)
            has(tr.t("rules.bot.swap", rank=rank), swap and d == deck)
        has(tr.t("rules.options.swap.off"), not swap)
        has(tr.t("rules.swap.title"), swap)
        # Series length.
        series = rules.series_length
        for length in (3, 5, 10):
            has(tr.n("rules.options.series.many", length), series == length)
            has(tr.n("rules.series.body", length), series == length)
        has(tr.t("rules.options.series.single"), series == 1)
        has(tr.t("rules.deal.later"), series > 1)
        has(tr.t("rules.series.title"), series > 1)
        # Always there: drawing, end of the game, the buttons and the timer.
        has(tr.t("rules.draw.body", hand=HAND_SIZE))
        for key in ("rules.end.out", "rules.end.durak", "rules.end.draw", "rules.bout.take"):
            has(tr.t(key))
        for key in ("rules.bot.lobby", "rules.bot.private", "rules.bot.beat", "rules.bot.leave"):
            has(tr.t(key))
        has(tr.n("rules.bot.timer", 60))
        has(tr.n("rules.bot.takeover", 3))
        assert "/newgame" in text


@pytest.mark.parametrize("lang", SUPPORTED)
def test_rules_text_timer_options(lang: str) -> None:
    tr = translator(lang)
    text = "\n".join(rules_text(Rules(), lang, turn_timeout=45, max_timeouts=2))
    assert tr.n("rules.bot.timer", 45) in text and tr.n("rules.options.timer", 45) in text
    assert tr.n("rules.bot.takeover", 2) in text
    assert tr.n("rules.bot.timer", 60) not in text


@pytest.mark.parametrize("lang", SUPPORTED)
def test_rules_text_splits_on_sections(lang: str) -> None:
    rules = Rules(variant="perevodnoy", series_length=10, throw_in="neighbours")
    messages = rules_text(rules, lang)
    assert len(messages) >= 2
    assert rules_text(rules, lang) == messages
    tr = translator(lang)
    sections = ("cards", "deal", "bout", "transfer", "draw", "swap", "end", "series", "bot")
    titles = [tr.t(f"rules.{section}.title") for section in sections]
    lines = [line for message in messages for line in message.split("\n")]
    for title in titles:
        assert lines.count(title) == 1, title
    assert messages[0].startswith(tr.t("rules.title"))
    for message in messages[1:]:
        assert any(message.startswith(title) for title in titles)


# --- no English left in the other languages ----------------------------------------------

# Words that are at home in the other language too (names, loanwords, homographs).
SHARED_WORDS = {"bot", "chat", "durak", "telegram", "podkidnoy", "perevodnoy"}
ALSO_NATIVE = {
    "es": {"normal"},
    "de": {"code", "computer", "hand", "lobby", "normal"},
    "pt": {"for", "normal"},
    "ru": set(),
    "uk": set(),
}


def words(html_text: str) -> set[str]:
    plain = re.sub(r"/\w+", " ", visible_text(html_text))
    return {w.lower() for w in re.findall(r"[^\W\d_]{3,}", plain)}


@pytest.mark.parametrize("lang", OTHERS)
def test_no_english_leftovers(lang: str) -> None:
    allowed = SHARED_WORDS | ALSO_NATIVE[lang]
    for rules in all_rules():
        english = words("\n".join(rules_text(rules, DEFAULT))) - allowed
        leftovers = english & words("\n".join(rules_text(rules, lang)))
        assert not leftovers, f"{lang} {rules!r}: English words {sorted(leftovers)}"
    english = words(how_to_play(DEFAULT)) - allowed
    assert not english & words(how_to_play(lang))


@pytest.mark.parametrize("lang", SUPPORTED)
def test_how_to_play(lang: str) -> None:
    text = how_to_play(lang)
    check_html(text)
    assert telegram_length(text) <= 600
    assert "/rules" in text and text.startswith("<b>")
    assert text == translator(lang).t("rules.howto")
