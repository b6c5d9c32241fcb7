"""A logging filter that keeps secrets (the bot token, the webhook secret) out of every log line.

Libraries log request URLs, and the Bot API puts the token in every URL; a filter on the
handlers catches whatever logger the line comes from, at any level.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

MASK = "<redacted>"


class Redactor(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        # Longest first, so a secret that contains another is masked whole.
        self.secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self.redact(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if clean != message:
            record.msg, record.args = clean, None
        return True
