"""Telegram Mini App: the live table and your hand, served by the bot itself."""
