"""python-telegram-bot handlers and the guard in front of them."""
