"""Opening the bot's Mini App from the sandbox page, as a Telegram client would.

Telegram opens a ``web_app`` button's URL with the launch parameters in the URL
fragment: ``tgWebAppData`` (init data signed with the bot's token), the theme and the
colour scheme. The sandbox knows the made-up token, so it signs exactly the same way.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from urllib.parse import quote

from bot.webapp.initdata import make_init_data

LIGHT_THEME = {
    "bg_color": "#ffffff",
    "text_color": "#000000",
    "hint_color": "#999999",
    "link_color": "#2481cc",
    "button_color": "#3390ec",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#f4f4f5",
}


@dataclass(frozen=True)
class MiniAppLauncher:
    token: str
    base_url: str
    """The bot's WEBAPP_URL: only buttons pointing there are opened."""

    def launch_url(self, url: str, user_id: int, name: str, language: str) -> str:
        base = self.base_url.rstrip("/") + "/"
        if not (url == base.rstrip("/") or url.startswith(base)) or "#" in url:
            raise ValueError("this web app is not the bot's Mini App")
        init = make_init_data(
            self.token, user_id, name, auth_date=int(time.time()), language_code=language
        )
        fragment = "&".join(
            (
                f"tgWebAppData={quote(init)}",
                f"tgWebAppThemeParams={quote(json.dumps(LIGHT_THEME))}",
                "tgWebAppColorScheme=light",
                "tgWebAppPlatform=sandbox",
            )
        )
        return f"{url}#{fragment}"
