"""Pure: the records, the game flow, lobby options, the callback codec, hand modes."""
