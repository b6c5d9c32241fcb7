"""Redis only: keys, records, owed output, screens, timers, stats, settings.

``keys`` spells every key; one repository per concern (``games``, ``output``, ``screens``,
``timers``, ``stats``, ``preferences``, ``migration``) shares ``transactions``, and the
façade ``storage.Storage`` is what the rest of the bot calls.

Three words for three kinds of lock (some public method names predate them):

- lease: a worker's time-bounded ownership of a place's recurring work (its timer, its
  owed output), renewed while it works; one that runs out is another worker's to take.
- claim: one worker's right to change one message now (its edit or its send), ending by
  itself should the worker die.
- once: a marker that something happened exactly once (a counted game, a migration, a
  lost game's notice); a repeat finds it and does nothing.
"""
