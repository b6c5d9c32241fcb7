"""Where the sandbox's bot keeps its games and statistics (its ``DATA_DIR``).

Without ``REDIS_URL`` the bot starts a private ``redis-server`` with an append-only
file in ``DATA_DIR`` (``./data`` by default). A sandbox run must not write into the
checkout, nor hand one newcomer the last one's stats, so by default each run gets a
fresh temporary directory that is removed when it stops; ``--data-dir`` keeps the
store in a directory of your choice instead (reused by later runs given the same one).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import redis

SOCKET = "redis.sock"
"""The private redis-server's socket in the data directory (``bot.store.redis_connect``)."""


@contextlib.contextmanager
def sandbox_store(keep_in: str | None) -> Iterator[Path]:
    """The data directory for one sandbox run: ``keep_in``, or a fresh temporary one
    (removed afterwards, with any redis-server still running in it stopped first)."""
    if keep_in is not None:
        path = Path(keep_in).expanduser().resolve()
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    path = Path(tempfile.mkdtemp(prefix="durak-sandbox-"))
    try:
        yield path
    finally:
        stop_private_redis(path)
        shutil.rmtree(path, ignore_errors=True)


def stop_private_redis(data_dir: Path) -> None:
    """Shut down a redis-server left in ``data_dir`` (the bot stops its own at exit; a
    bot that was killed leaves it running)."""
    sock = data_dir / SOCKET
    if not sock.exists():
        return
    client = redis.Redis(unix_socket_path=str(sock), socket_timeout=2)
    # It drops the connection as it exits; a server already gone refuses it.
    with contextlib.suppress(redis.RedisError, OSError):
        client.shutdown(nosave=True)
    client.close()
