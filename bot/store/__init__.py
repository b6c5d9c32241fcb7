"""Redis only: keys, records, owed output, screens, timers, stats, settings."""
