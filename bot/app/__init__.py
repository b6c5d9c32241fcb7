"""Use cases: moves, timers, computer turns, recovery."""
