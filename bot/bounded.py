"""A dict that forgets its least recently written entries past a size limit.

Per-chat memory (message digests, admin answers, hand modes) must not grow with the
number of chats ever seen: forgetting an entry only costs one extra Bot API call later.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(dict[K, V]):
    """Insertion-ordered; writing a key moves it to the end; the oldest go first."""

    def __init__(self, max_items: int) -> None:
        super().__init__()
        self.max_items = max_items

    def __setitem__(self, key: K, value: V) -> None:
        if key in self:
            super().__delitem__(key)
        super().__setitem__(key, value)
        while len(self) > self.max_items:
            super().__delitem__(next(iter(self)))
