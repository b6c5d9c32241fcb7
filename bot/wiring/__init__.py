"""Builds everything with constructor arguments; only entry points import it."""
