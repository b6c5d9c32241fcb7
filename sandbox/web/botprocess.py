"""The real bot as a child process: ``python -m bot``, its output forwarded line by line."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def bot_environment(
    base: Mapping[str, str],
    token: str,
    api_url: str,
    webapp_port: int | None = None,
    *,
    data_dir: Path | None = None,
) -> dict[str, str]:
    """The bot's environment: ours, pointed at the emulator.

    Everything else (TURN_TIMEOUT, AI_DELAY, LOG_LEVEL, pacing, ...) passes through from
    the environment or the bot's own ``.env``. REDIS_URL is honoured only from the
    environment: an empty value overrides a ``.env`` entry, so a sandbox never writes
    into a production Redis by accident. ``data_dir`` is the bot's DATA_DIR (its private
    redis-server's files, see ``sandbox.web.store``), whatever the environment says.
    """
    env = dict(base)
    env["TELEGRAM_BOT_TOKEN"] = token
    env["TELEGRAM_API_URL"] = api_url
    env["WEBHOOK_URL"] = ""  # long polling: the emulator delivers updates via getUpdates
    if webapp_port is not None:  # the Mini App, on loopback like everything here
        env["WEBAPP_URL"] = f"http://127.0.0.1:{webapp_port}"
        env["WEBAPP_LISTEN"] = "127.0.0.1"
        env["WEBAPP_PORT"] = str(webapp_port)
        env["WEBAPP_SHORT_NAME"] = ""  # no t.me links: they lead outside the sandbox
    env.setdefault("REDIS_URL", "")
    if data_dir is not None:
        env["DATA_DIR"] = str(data_dir)
    env["PYTHONUNBUFFERED"] = "1"  # log lines reach the console as they happen
    # A configured HTTP proxy must not intercept calls to the loopback emulator.
    for key in ("NO_PROXY", "no_proxy"):
        kept = [h for h in env.get(key, "").split(",") if h.strip()]
        env[key] = ",".join([*kept, *(h for h in LOOPBACK_NAMES if h not in kept)])
    return env


class BotProcess:
    """Start, watch and stop the bot; each output line goes to ``echo`` with a prefix."""

    def __init__(
        self,
        env: Mapping[str, str],
        *,
        echo: Callable[[str], None],
        prefix: str = "bot     | ",
        command: tuple[str, ...] = ("-m", "bot"),
    ) -> None:
        self.env = dict(env)
        self.echo = echo
        self.prefix = prefix
        self.command = command
        self.proc: asyncio.subprocess.Process | None = None
        self._pump: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *self.command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=self.env,
            # Its own process group: a terminal Ctrl-C reaches only the sandbox, which then
            # stops the bot exactly once (a second signal would cut its shutdown short),
            # and a last-resort kill also takes any worker processes the bot started.
            start_new_session=True,
            limit=1 << 20,
        )
        self._pump = asyncio.create_task(self._forward(), name="sandbox:bot-log")

    async def _forward(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stream = self.proc.stdout
        while True:
            try:
                raw = await stream.readline()
            except ValueError:  # a line over the limit: pass on what we have
                raw = await stream.read(1 << 20)
            if not raw:
                return
            self.echo(self.prefix + raw.decode("utf-8", "replace").rstrip("\r\n"))

    async def wait(self) -> int:
        """The exit code, once the process ended and all its output was forwarded."""
        assert self.proc is not None
        code = await self.proc.wait()
        if self._pump is not None:
            # Shielded: cancelling a waiter must not cut the log short.
            await asyncio.shield(self._pump)
        return code

    async def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (the bot shuts down gracefully), SIGKILL after ``timeout`` seconds."""
        if self.proc is None:
            return None
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.echo(f"{self.prefix}did not stop within {timeout:g}s; killing it")
            # Only now, just after it ended: a group id left unused for long could be reused.
            self._kill_group()
            await self.proc.wait()
        if self._pump is not None:
            # A leftover grandchild could hold the pipe open; don't wait for it forever.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._pump), 2.0)
            self._pump.cancel()
        return self.proc.returncode

    def _kill_group(self) -> None:
        """Kill whatever is left in the bot's process group (the bot, worker processes)."""
        if self.proc is None or sys.platform == "win32":
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
