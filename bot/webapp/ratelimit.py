"""Request limits of the Mini App's API: token buckets per user and per client address.

A bucket holds up to ``burst`` tokens and gains ``per_second`` of them every second; a
request takes one or is refused with the seconds until one is there (HTTP 429 with
``Retry-After``). Kept in memory, per process: cheap (no Redis round trip on the hot
path), and with several processes a client gets at most that many times the rate, which
is still a limit. Full buckets are forgotten, so memory follows the active clients.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rate:
    per_second: float
    burst: float


USER_RATE = Rate(per_second=5.0, burst=20.0)
"""A person taps a few times a second at most; a page load costs two requests."""
ADDRESS_RATE = Rate(per_second=40.0, burst=120.0)
"""Many people may share one address (carrier NAT, an office): generous."""
STREAMS_PER_USER = 4
"""Open event streams per user and process (devices, tabs); a fifth ends the oldest."""


class Buckets:
    def __init__(
        self,
        rate: Rate,
        clock: Callable[[], float] = time.monotonic,
        most: int = 50_000,
    ) -> None:
        self.rate = rate
        self.clock = clock
        self.most = most
        self.levels: dict[Hashable, tuple[float, float]] = {}
        """Key -> (tokens, when counted); a key missing has a full bucket."""

    def take(self, key: Hashable) -> float:
        """Take a token: 0.0 when there was one, else the seconds until there is."""
        now = self.clock()
        rate = self.rate
        tokens, at = self.levels.get(key, (rate.burst, now))
        tokens = min(rate.burst, tokens + (now - at) * rate.per_second)
        if tokens >= 1.0:
            self.levels[key] = (tokens - 1.0, now)
            if len(self.levels) > self.most:
                self.forget_full(now)
            return 0.0
        self.levels[key] = (tokens, now)
        return (1.0 - tokens) / rate.per_second

    def forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled; if that is not enough (a flood of new
        keys), the oldest counted half: forgetting only ever lets a client through."""
        rate = self.rate
        self.levels = {
            key: (tokens, at)
            for key, (tokens, at) in self.levels.items()
            if tokens + (now - at) * rate.per_second < rate.burst
        }
        if len(self.levels) > self.most // 2:
            oldest = sorted(self.levels.items(), key=lambda item: item[1][1])
            self.levels = dict(oldest[len(oldest) // 2 :])


def retry_after(seconds: float) -> str:
    """The ``Retry-After`` header: whole seconds, at least one."""
    return str(max(1, math.ceil(seconds)))


def client_address(peer: str | None, forwarded_for: str | None) -> str | None:
    """The address to limit: the peer's, or behind a reverse proxy on this host (a
    loopback peer) the last address the proxy added to ``X-Forwarded-For``. A loopback
    peer without that header is a local process (the sandbox, a proxy that does not say):
    no address limit, rather than one shared by every player behind it."""
    if peer is None:
        return None
    try:
        loopback = ipaddress.ip_address(peer).is_loopback
    except ValueError:
        return peer  # a Unix socket path or the like: one client
    if not loopback:
        return peer
    if forwarded_for:
        last = forwarded_for.rsplit(",", 1)[-1].strip()
        try:
            return str(ipaddress.ip_address(last))
        except ValueError:
            return None
    return None
