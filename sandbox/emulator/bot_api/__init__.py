"""The Bot API methods the emulator implements, grouped by area; ``dispatch`` runs a call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sandbox.emulator.models import EmuBot
from sandbox.emulator.params import Params
from sandbox.emulator.world import World

# Every method: (the emulator's state, the calling bot, the call's parameters) -> result.
Handler = Callable[[World, EmuBot, Params], Awaitable[Any]]
