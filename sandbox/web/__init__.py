"""The sandbox page: people in a browser play the real bot through the emulator.

- ``site``: the demo group, its people and the page's JSON + event-stream API
- ``view``: what the page is shown (pure functions)
- ``botprocess``: the bot as a child process (``python -m bot``)
- ``static/``: the page itself (plain HTML, JS, CSS)
"""

from __future__ import annotations

from sandbox.web.site import FIRST_USER_ID, GROUP_ID, GROUP_TITLE, LANGUAGES, SandboxWeb

__all__ = ["FIRST_USER_ID", "GROUP_ID", "GROUP_TITLE", "LANGUAGES", "SandboxWeb"]
