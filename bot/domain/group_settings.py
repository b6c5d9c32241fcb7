"""The /settings menu's settings, one row each.

Two sections: the defaults a new lobby starts from (one row per lobby option, taken from
``bot.domain.lobby_options``: adding a lobby option adds its default here by itself, and
the computer level it offers first), and
the group's own rules (who may start games, the turn timeout, tidy-up, rating). The
callback codec takes each row's code and values, the handler its field, the rendering its
texts. Each value travels as its index in ``values`` (one digit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from bot.domain.lobby_options import LOBBY_OPTIONS, LobbyOption
from bot.domain.records import (
    AI_LEVELS,
    TURN_TIMEOUTS,
    WHO_STARTS,
    ChatSettings,
    LobbyDefaults,
)

Section = Literal["games", "group"]
SECTIONS: Final[tuple[Section, ...]] = ("games", "group")
Screen = Literal["home", "games", "group"]
SCREENS: Final[tuple[Screen, ...]] = ("home", "games", "group")
"""The menu's screens: the first lists the sections, then one screen per section."""


@dataclass(frozen=True)
class GroupSetting:
    name: str
    """How handlers and tests call it (a lobby option's default: the option's ``op``)."""
    code: str
    """One letter in the callback data (``S:<code><value index>``)."""
    section: Section
    values: tuple[Any, ...]
    title: str
    """Catalogue key of its name, heading its row of values."""
    value_keys: Mapping[Any, str] | None = None
    """Catalogue key of each value's text; None: shown as is (or through ``unit``)."""
    unit: str | None = None
    """Catalogue key that shows a bare value (``{value}``), e.g. "30 s"."""
    option: LobbyOption | None = None
    """Set for a lobby option's default: the option it is the default of."""
    default_field: str | None = None
    """Set for another default of new lobbies: its field of ``LobbyDefaults``."""

    def current(self, settings: ChatSettings, bot_timeout: float) -> Any:
        """Its value in ``settings``; ``bot_timeout``: the bot's own turn timeout, what
        a group that never chose one has."""
        if self.option is not None:
            return self.option.default(settings.defaults or LobbyDefaults())
        if self.default_field is not None:
            return getattr(settings.defaults or LobbyDefaults(), self.default_field)
        if self.name == "timeout":
            return settings.turn_timeout or round(bot_timeout)
        return getattr(settings, self.name)

    def set_to(self, settings: ChatSettings, value: Any) -> ChatSettings:
        """A copy of ``settings`` with this setting at ``value`` (one of ``values``)."""
        if self.option is not None:
            defaults = self.option.set_default(settings.defaults or LobbyDefaults(), value)
            return settings.model_copy(update={"defaults": defaults})
        if self.default_field is not None:
            defaults = (settings.defaults or LobbyDefaults()).model_copy(
                update={self.default_field: value}
            )
            return settings.model_copy(update={"defaults": defaults})
        field = "turn_timeout" if self.name == "timeout" else self.name
        return settings.model_copy(update={field: value})


_ON_OFF: Final = {False: "option.off", True: "option.on"}
_OWN: Final[tuple[GroupSetting, ...]] = (
    GroupSetting(
        "starts",
        "w",
        "group",
        WHO_STARTS,
        "settings.name_starts",
        {"anyone": "settings.starts_anyone", "admins": "settings.starts_admins"},
    ),
    GroupSetting(
        "timeout", "o", "group", TURN_TIMEOUTS, "settings.name_timeout", unit="settings.seconds"
    ),
    GroupSetting("tidy", "y", "group", (False, True), "settings.name_tidy", _ON_OFF),
    GroupSetting("rating", "r", "group", (False, True), "settings.button_rating", _ON_OFF),
)
"""The group's own settings. Rating's values are (off, on), so the buttons of menus sent
before this table (``S:r0``, ``S:r1``) still mean what they meant."""
_AI: Final = GroupSetting(
    "ai",
    "a",
    "games",
    AI_LEVELS,
    "settings.name_ai",
    {level: f"settings.ai_{level}" for level in AI_LEVELS},
    default_field="ai",
)
"""The computer level a new lobby offers first."""
_TAKEN: Final = {setting.code for setting in (*_OWN, _AI)} | {"m"}


def _default_of(option: LobbyOption) -> GroupSetting:
    code = option.code if option.code not in _TAKEN else option.code.upper()
    return GroupSetting(
        option.op, code, "games", option.values, option.name, option.value_keys, option=option
    )


GROUP_SETTINGS: Final[tuple[GroupSetting, ...]] = (
    *(_default_of(option) for option in LOBBY_OPTIONS),
    _AI,
    *_OWN,
)
SETTINGS_BY_NAME: Final = {setting.name: setting for setting in GROUP_SETTINGS}
SCREEN_CODE: Final = "m"
"""The code of the menu's screen buttons (``S:m<screen index>``)."""
assert len({s.code for s in GROUP_SETTINGS} | {SCREEN_CODE}) == len(GROUP_SETTINGS) + 1
assert all(len(s.values) <= 10 for s in GROUP_SETTINGS)


def in_section(section: Section) -> tuple[GroupSetting, ...]:
    return tuple(setting for setting in GROUP_SETTINGS if setting.section == section)
