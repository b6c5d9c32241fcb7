"""A dict that forgets its least recently written entries past a size limit.

Per-chat memory (message digests, admin answers, hand modes) must not grow with the
number of chats ever seen: forgetting an entry only costs one extra Bot API call later.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(OrderedDict[K, V]):
    """Writing a key moves it to the end; past ``max_items`` the oldest go first.

    An OrderedDict, not a dict: dropping a plain dict's first key leaves a hole that
    every later ``next(iter())`` walks over, which turns the cache quadratic."""

    def __init__(self, max_items: int) -> None:
        super().__init__()
        self.max_items = max_items

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.max_items:
            self.popitem(last=False)
