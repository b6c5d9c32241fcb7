"""Shared test helpers (conftest.py only turns some of them into fixtures)."""
