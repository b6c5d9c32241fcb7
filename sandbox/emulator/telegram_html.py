"""Telegram's HTML ``parse_mode``, re-implemented strictly for the Bot API emulator.

The rules and error texts follow Telegram's own parser (tdlib ``parse_html``): only the
documented tag subset is accepted, unknown ``&...;`` sequences stay literal, and every error
names a UTF-8 byte offset. Entity offsets and lengths are in UTF-16 code units, as in the API.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from sandbox.emulator.types import JsonDict

ALLOWED_TAGS = frozenset(
    {
        "a",
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "code",
        "pre",
        "tg-spoiler",
        "span",
        "tg-emoji",
        "blockquote",
    }
)

_TAG_ENTITY = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "code": "code",
    "pre": "pre",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "tg-emoji": "custom_emoji",
    "blockquote": "blockquote",
    "a": "text_link",
}

_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


class HtmlParseError(ValueError):
    """Malformed HTML; ``str(err)`` is the part after ``can't parse entities: ``."""


@dataclass(frozen=True)
class FormattedText:
    """Visible text plus Bot API ``MessageEntity`` dicts (UTF-16 offsets)."""

    text: str
    entities: tuple[JsonDict, ...] = ()


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit Telegram counts offsets (and limits) in."""
    return len(text.encode("utf-16-le")) // 2


def _byte_offset(source: str, index: int) -> int:
    return len(source[:index].encode("utf-8"))


def _decode_entity(source: str, index: int) -> tuple[str, int] | None:
    """Decode ``&name;`` / ``&#N;`` / ``&#xH;`` at ``index``; None leaves the ``&`` literal."""
    end = source.find(";", index + 1, index + 12)
    if end == -1:
        return None
    body = source[index + 1 : end]
    if body.startswith("#"):
        digits = body[1:]
        try:
            code = int(digits[1:], 16) if digits[:1] in ("x", "X") else int(digits, 10)
        except ValueError:
            return None
        if not 0 < code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return None
        return chr(code), end + 1
    if body in _NAMED_ENTITIES:
        return _NAMED_ENTITIES[body], end + 1
    return None


@dataclass
class _OpenTag:
    name: str
    argument: str | None
    start: int  # UTF-16 offset in the output text


def parse_html(source: str) -> FormattedText:
    """Parse Telegram-flavoured HTML into visible text and entities.

    Raises HtmlParseError with Telegram's wording for anything Telegram would reject.
    """
    out: list[str] = []
    pos = 0  # UTF-16 position in the output
    stack: list[_OpenTag] = []
    entities: list[JsonDict] = []
    i = 0
    n = len(source)

    def fail(message: str) -> HtmlParseError:
        return HtmlParseError(message)

    while i < n:
        ch = source[i]
        if ch == "&":
            decoded = _decode_entity(source, i)
            if decoded is None:
                out.append("&")
                pos += 1
                i += 1
            else:
                out.append(decoded[0])
                pos += utf16_len(decoded[0])
                i = decoded[1]
            continue
        if ch != "<":
            out.append(ch)
            pos += 2 if ord(ch) > 0xFFFF else 1
            i += 1
            continue

        begin = i
        if i + 1 < n and source[i + 1] == "/":
            if not stack:
                raise fail(f"Unexpected end tag at byte offset {_byte_offset(source, begin)}")
            i += 2
            name_start = i
            while i < n and not source[i].isspace() and source[i] != ">":
                i += 1
            end_name = source[name_start:i].lower()
            while i < n and source[i].isspace():
                i += 1
            if i >= n or source[i] != ">":
                raise fail(f"Unclosed end tag at byte offset {_byte_offset(source, begin)}")
            i += 1
            top = stack.pop()
            if end_name and end_name != top.name:
                raise fail(
                    f"Unmatched end tag at byte offset {_byte_offset(source, begin)}, "
                    f'expected "</{top.name}>", found "</{end_name}>"'
                )
            _close_tag(top, pos, stack, entities)
            continue

        # Start tag.
        i += 1
        name_start = i
        while i < n and not source[i].isspace() and source[i] != ">":
            i += 1
        name = source[name_start:i].lower()
        if name not in ALLOWED_TAGS:
            raise fail(
                f'Unsupported start tag "{name}" at byte offset {_byte_offset(source, begin)}'
            )
        unclosed = f"Unclosed start tag at byte offset {_byte_offset(source, begin)}"
        argument: str | None = None
        while True:
            while i < n and source[i].isspace():
                i += 1
            if i >= n:
                raise fail(unclosed)
            if source[i] == ">":
                i += 1
                break
            attr_start = i
            while i < n and not source[i].isspace() and source[i] not in "=>":
                i += 1
            attribute = source[attr_start:i].lower()
            if not attribute:
                raise fail(
                    f'Empty attribute name in the tag "{name}" at byte offset '
                    f"{_byte_offset(source, begin)}"
                )
            while i < n and source[i].isspace():
                i += 1
            if i >= n:
                raise fail(unclosed)
            if source[i] != "=":
                # `<blockquote expandable>` is the one valueless attribute Telegram accepts.
                if name == "blockquote" and attribute == "expandable":
                    argument = "expandable"
                    continue
                raise fail(
                    "Expected equal sign in declaration of an attribute of the tag "
                    f'"{name}" at byte offset {_byte_offset(source, begin)}'
                )
            i += 1
            while i < n and source[i].isspace():
                i += 1
            if i >= n:
                raise fail(unclosed)
            if source[i] in "'\"":
                quote = source[i]
                i += 1
                value_parts: list[str] = []
                while i < n and source[i] != quote:
                    if source[i] == "&":
                        decoded = _decode_entity(source, i)
                        if decoded is not None:
                            value_parts.append(decoded[0])
                            i = decoded[1]
                            continue
                    value_parts.append(source[i])
                    i += 1
                if i >= n:
                    raise fail(unclosed)
                i += 1
                value = "".join(value_parts)
            else:
                token_start = i
                while i < n and source[i].isascii() and (source[i].isalnum() or source[i] in ".-"):
                    i += 1
                value = source[token_start:i].lower()
                if i >= n:
                    raise fail(unclosed)
                if not source[i].isspace() and source[i] != ">":
                    raise fail(
                        "Unexpected end of name token at byte offset "
                        f"{_byte_offset(source, token_start)}"
                    )
            if name == "a" and attribute == "href":
                argument = value
            elif name == "code" and attribute == "class" and value.startswith("language-"):
                argument = value[len("language-") :]
            elif name == "span" and attribute == "class" and value.startswith("tg-"):
                argument = value[len("tg-") :]
            elif name == "tg-emoji" and attribute == "emoji-id":
                argument = value
        if name == "span" and argument != "spoiler":
            raise fail(
                f'Tag "span" must have class "tg-spoiler" at byte offset '
                f"{_byte_offset(source, begin)}"
            )
        stack.append(_OpenTag(name, argument, pos))

    if stack:
        raise fail(f'Can\'t find end tag corresponding to start tag "{stack[-1].name}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return FormattedText("".join(out), tuple(entities))


def _close_tag(tag: _OpenTag, pos: int, stack: list[_OpenTag], entities: list[JsonDict]) -> None:
    length = pos - tag.start
    if length <= 0:
        return
    kind = _TAG_ENTITY[tag.name]
    entity: JsonDict = {"type": kind, "offset": tag.start, "length": length}
    if tag.name == "code" and stack and stack[-1].name == "pre" and stack[-1].start == tag.start:
        # <pre><code class="language-x"> is one pre entity carrying the language.
        if tag.argument:
            stack[-1].argument = tag.argument
        return
    if kind == "pre" and tag.argument:
        entity["language"] = tag.argument
    elif kind == "text_link":
        if not tag.argument:
            return
        entity["url"] = tag.argument
    elif kind == "custom_emoji":
        if not tag.argument:
            return
        entity["custom_emoji_id"] = tag.argument
    elif kind == "blockquote" and tag.argument == "expandable":
        entity["type"] = "expandable_blockquote"
    entities.append(entity)


def strip_formatted(formatted: FormattedText) -> FormattedText:
    """Trim leading/trailing whitespace as Telegram does, shifting/clipping entities."""
    text = formatted.text
    stripped = text.strip()
    if stripped == text:
        return formatted
    lead = utf16_len(text[: len(text) - len(text.lstrip())])
    total = utf16_len(stripped)
    entities: list[JsonDict] = []
    for entity in formatted.entities:
        start = max(0, int(entity["offset"]) - lead)
        end = min(total, int(entity["offset"]) + int(entity["length"]) - lead)
        if end > start:
            entities.append({**entity, "offset": start, "length": end - start})
    return FormattedText(stripped, tuple(entities))


_SAFE_SCHEMES = ("http://", "https://", "tg://", "mailto:")


def _open_tag(entity: JsonDict) -> tuple[str, str]:
    kind = str(entity.get("type", ""))
    simple = {
        "bold": "b",
        "italic": "i",
        "underline": "u",
        "strikethrough": "s",
        "code": "code",
        "pre": "pre",
        "blockquote": "blockquote",
    }
    if kind in simple:
        tag = simple[kind]
        return f"<{tag}>", f"</{tag}>"
    if kind == "expandable_blockquote":
        return '<blockquote class="tg-expandable">', "</blockquote>"
    if kind in ("text_link", "url"):
        url = str(entity.get("url", ""))
        if url.lower().startswith(_SAFE_SCHEMES):
            href = html.escape(url, quote=True)
            return f'<a href="{href}" rel="noopener noreferrer" target="_blank">', "</a>"
    css = "tg-" + kind.replace("_", "-")
    return f'<span class="{html.escape(css, quote=True)}">', "</span>"


def entities_to_html(text: str, entities: list[JsonDict] | tuple[JsonDict, ...]) -> str:
    """Render text + entities as safe, well-formed HTML for a browser (not Telegram's HTML).

    Overlapping entities are handled by closing and re-opening inner tags.
    """
    valid = [
        e
        for e in entities
        if isinstance(e.get("offset"), int) and isinstance(e.get("length"), int) and e["length"] > 0
    ]
    starts: dict[int, list[JsonDict]] = {}
    for entity in sorted(valid, key=lambda e: (e["offset"], -e["length"])):
        starts.setdefault(entity["offset"], []).append(entity)
    out: list[str] = []
    stack: list[JsonDict] = []
    pos = 0

    def close_ending_at(position: int) -> None:
        if not any(e["offset"] + e["length"] <= position for e in stack):
            return
        reopen: list[JsonDict] = []
        while any(e["offset"] + e["length"] <= position for e in stack):
            entity = stack.pop()
            out.append(_open_tag(entity)[1])
            if entity["offset"] + entity["length"] > position:
                reopen.append(entity)
        for entity in reversed(reopen):
            out.append(_open_tag(entity)[0])
            stack.append(entity)

    for ch in text:
        close_ending_at(pos)
        for entity in starts.get(pos, []):
            out.append(_open_tag(entity)[0])
            stack.append(entity)
        out.append(html.escape(ch, quote=False))
        pos += 2 if ord(ch) > 0xFFFF else 1
    while stack:
        out.append(_open_tag(stack.pop())[1])
    return "".join(out)
