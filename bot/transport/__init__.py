"""Telegram's Bot API calls and pacing; knows nothing of games."""
