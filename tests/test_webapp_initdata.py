"""Mini App init data: Telegram's HMAC check, property-tested."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import parse_qsl, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.webapp.initdata import InitDataError, make_init_data, sign, validate

TOKEN = "5550001:durak-test-token"
NOW = 1_800_000_000
MAX_AGE = 86400

keys = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).filter(
    lambda k: k not in ("hash", "user", "auth_date")
)
values = st.text(max_size=40)
users = st.fixed_dictionaries(
    {"id": st.integers(1, 2**52), "first_name": st.text(min_size=1, max_size=20)},
    optional={"language_code": st.sampled_from(["en", "de", "pt-br"]), "last_name": values},
)


@st.composite
def field_sets(draw: st.DrawFn) -> dict[str, str]:
    extra = draw(st.dictionaries(keys, values, max_size=4))
    user = draw(users)
    age = draw(st.integers(0, MAX_AGE))
    return {**extra, "user": json.dumps(user), "auth_date": str(NOW - age)}


def check(init_data: str, token: str = TOKEN, now: float = NOW) -> int:
    return validate(init_data, token, max_age=MAX_AGE, now=now).user_id


@given(field_sets())
def test_signed_data_verifies(fields: dict[str, str]) -> None:
    assert check(sign(fields, TOKEN)) == json.loads(fields["user"])["id"]


@given(field_sets(), st.data())
def test_any_changed_field_is_refused(fields: dict[str, str], data: st.DataObject) -> None:
    signed = dict(parse_qsl(sign(fields, TOKEN), keep_blank_values=True))
    key = data.draw(st.sampled_from(sorted(signed)))
    new = data.draw(values.filter(lambda v: v != signed[key]))
    with pytest.raises(InitDataError):
        check(urlencode({**signed, key: new}))


@given(field_sets(), st.sampled_from(["drop", "add"]), keys, values)
def test_dropped_or_added_field_is_refused(
    fields: dict[str, str], how: str, key: str, value: str
) -> None:
    signed = dict(parse_qsl(sign(fields, TOKEN), keep_blank_values=True))
    if how == "drop":
        victim = sorted(k for k in signed if k != "hash")[0]
        del signed[victim]
    else:
        if key in signed:
            return
        signed[key] = value
    with pytest.raises(InitDataError):
        check(urlencode(signed))


@given(field_sets(), st.text("0123456789:abcdefXYZ_-", min_size=1, max_size=46))
def test_another_token_is_refused(fields: dict[str, str], token: str) -> None:
    if token == TOKEN:
        return
    with pytest.raises(InitDataError):
        check(sign(fields, token))


@given(field_sets())
def test_missing_hash_is_refused(fields: dict[str, str]) -> None:
    signed = dict(parse_qsl(sign(fields, TOKEN), keep_blank_values=True))
    del signed["hash"]
    with pytest.raises(InitDataError):
        check(urlencode(signed))


@given(st.integers(1, 10**6))
def test_older_than_max_age_is_refused(extra: int) -> None:
    data = make_init_data(TOKEN, 7, "Ann", auth_date=NOW)
    assert check(data, now=NOW + MAX_AGE) == 7
    with pytest.raises(InitDataError, match="expired"):
        check(data, now=NOW + MAX_AGE + extra)


def test_the_documented_construction() -> None:
    """Spelled out once by hand: secret = HMAC(key "WebAppData", token), hash over the
    sorted key=value lines without hash."""
    fields = {"user": '{"id":5,"first_name":"Ann"}', "auth_date": str(NOW), "query_id": "q"}
    secret = hmac.new(b"WebAppData", TOKEN.encode(), hashlib.sha256).digest()
    check_string = f"auth_date={NOW}\nquery_id=q\nuser={fields['user']}"
    digest = hmac.new(secret, check_string.encode(), hashlib.sha256).hexdigest()
    assert check(urlencode({**fields, "hash": digest})) == 5
    assert dict(parse_qsl(sign(fields, TOKEN)))["hash"] == digest


@pytest.mark.parametrize("bad", ["", "hash", "a=1&a=2", "user=%7B%7D&auth_date=1&hash=00"])
def test_garbage_is_refused(bad: str) -> None:
    with pytest.raises(InitDataError):
        check(bad)


def test_the_user_fields() -> None:
    data = make_init_data(TOKEN, 42, "Ann", auth_date=NOW, language_code="de", start_param="abc123")
    user = validate(data, TOKEN, max_age=MAX_AGE, now=NOW)
    assert (user.user_id, user.full_name, user.language_code, user.start_param) == (
        42,
        "Ann",
        "de",
        "abc123",
    )
