"""python-telegram-bot handlers and the guard in front of them.

One module per command (``start``, ``newgame``, ``rules``, ``stats``, ``language``,
``help``), ``private`` and ``service`` for plain and service messages, ``taps`` for every
button (routed by kind, then by ``group_buttons.GROUP_ROUTES`` or
``hand_buttons.HAND_ROUTES``), and ``registry``, which registers them all and publishes
the command menus. Handlers decode, call a use case in ``bot.app``, and answer.
"""
