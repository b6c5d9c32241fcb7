"""What each message shows and keeping it so: the outbox.

``outbox`` is the façade the rest of the bot calls; ``planner`` decides what each message
should show (pure); ``message_sync`` keeps one message showing it (look, claim, edit or
send, record) for ``messages``' two kinds, the group message and a hand; ``owed`` works off
and settles what a move owes the screen; ``replies`` are the other new messages;
``screen_cache`` is what this process alone knows about the screen. The calls and their
pacing are ``bot.transport``'s.
"""
