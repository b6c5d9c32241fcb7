"""``durak-sandbox`` / ``python -m sandbox``: play the real bot in a browser, no Telegram.

One loopback port serves both the Bot API emulator (for the bot) and the sandbox page
(for people). The bot runs unmodified as ``python -m bot`` with TELEGRAM_API_URL pointing
at the emulator and a made-up token.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import secrets
import signal
import socket
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandbox.emulator import BotApiEmulator
from sandbox.emulator.httputil import is_loopback
from sandbox.web import SandboxWeb
from sandbox.web.botprocess import BotProcess, bot_environment
from sandbox.web.miniapp import MiniAppLauncher
from sandbox.web.store import sandbox_store

BOT_ID = 7000000001
BOT_USERNAME = "durak_sandbox_bot"
BOT_NAME = "Durak"
DEFAULT_PORT = 8765
READY_TIMEOUT = 60.0  # a cold start imports PTB, the engine and the AI: a few seconds


def echo(line: str) -> None:
    # A closed terminal (SIGHUP) must not stop us from stopping the bot.
    with contextlib.suppress(OSError, ValueError):
        print(line, flush=True)


def say(line: str) -> None:
    echo(f"sandbox | {line}")


def can_open_browser() -> bool:
    """False on a Linux console: webbrowser would start a text browser (lynx, w3m) in our
    terminal, which cannot run the page. $BROWSER, if set, is the user's explicit choice."""
    if os.environ.get("BROWSER") or not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def describe_exit(code: int) -> str:
    if code < 0:  # asyncio reports "killed by signal N" as -N
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="durak-sandbox",
        description="Play the Durak bot in a browser against a local Telegram Bot API "
        "emulator. No token, no Telegram, nothing leaves this machine.",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="loopback address to listen on (default: 127.0.0.1); others are refused",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port for the page and the emulator (default: {DEFAULT_PORT}; 0 = any free)",
    )
    parser.add_argument(
        "--no-open", action="store_true", help="do not open a browser, just print the URL"
    )
    parser.add_argument(
        "--no-rate-limits",
        action="store_true",
        help="do not enforce Telegram's flood limits in the emulator",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep games and statistics in DIR, for later runs given the same DIR "
        "(default: a fresh temporary directory, removed when the sandbox stops)",
    )
    args = parser.parse_args(argv)
    if not is_loopback(args.host):
        parser.error(
            f"--host {args.host}: the sandbox listens on loopback addresses only "
            "(127.0.0.1, ::1, localhost); its page can act as any user"
        )
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port}: not a port number")
    return args


def build(rate_limits: bool = True) -> tuple[BotApiEmulator, SandboxWeb, str]:
    """The emulator with our bot registered and the page installed (not started yet)."""
    emulator = BotApiEmulator(rate_limits=rate_limits)
    token = f"{BOT_ID}:{secrets.token_urlsafe(24)}"  # made up; valid only in this run
    emulator.add_bot(token, username=BOT_USERNAME, first_name=BOT_NAME)
    site = SandboxWeb(emulator, bot_username=BOT_USERNAME)
    site.install(emulator.app)
    return emulator, site, token


def free_loopback_port() -> int:
    """A port for the bot's Mini App server (the bot binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _on_stop_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            # Not available on Windows: there Ctrl-C cancels asyncio.run, and the
            # finally blocks below still stop the bot.
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)


async def _first(*tasks: asyncio.Task[Any]) -> None:
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)


def _say_where_data_lives(env: dict[str, str], data_dir: Path, *, kept: bool) -> None:
    if env["REDIS_URL"]:
        say("games and statistics are kept in the Redis of REDIS_URL")
    elif kept:
        say(f"games and statistics are kept in {data_dir}")
    else:
        say(f"games and statistics are kept in {data_dir} (fresh; removed when it stops)")


async def serve(args: argparse.Namespace, data_dir: Path) -> int:
    emulator, site, token = build(rate_limits=not args.no_rate_limits)
    try:
        await emulator.start(args.host, args.port)
    except OSError as err:
        say(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}")
        say("pick another port with --port (0 = any free port)")
        return 2
    stop = asyncio.Event()
    _on_stop_signals(stop)
    webapp_port = free_loopback_port()
    site.mini_app = MiniAppLauncher(token, f"http://127.0.0.1:{webapp_port}")
    env = bot_environment(os.environ, token, emulator.url, webapp_port, data_dir=data_dir)
    _say_where_data_lives(env, data_dir, kept=args.data_dir is not None)
    bot = BotProcess(env, echo=echo)
    tasks: list[asyncio.Task[Any]] = []
    try:
        await bot.start()
        say(f"started the bot: python -m bot (pid {bot.pid}), Bot API at {emulator.url}")
        exited = asyncio.create_task(bot.wait())
        stopped = asyncio.create_task(stop.wait())
        polling = asyncio.create_task(
            emulator.wait_for(
                lambda: emulator.stats.calls["getUpdates"] > 0,
                timeout=READY_TIMEOUT,
                what="the bot polls for updates",
            )
        )
        tasks += [exited, stopped, polling]
        await _first(exited, stopped, polling)
        if stopped.done():
            return 0
        if exited.done():
            how = describe_exit(exited.result())
            say(f"THE BOT EXITED ({how}) before it connected; see its log above")
            return 1
        if polling.exception() is not None:
            say(f"the bot has not polled for updates within {READY_TIMEOUT:g}s; still waiting")
        site.set_bot_status("running", pid=bot.pid)
        url = f"{emulator.url}/"
        say(f"Durak sandbox ready: {url}")
        say("Open it in a browser; one tab per player. Ctrl-C stops everything.")
        if not args.no_open:
            # webbrowser may run a launcher and wait for it: a thread keeps us responsive.
            opened = can_open_browser() and await asyncio.to_thread(webbrowser.open, url)
            if not opened:
                say("no browser to open here; open the URL above yourself")
        await _first(exited, stopped)
        if stopped.done():
            return 0
        code = exited.result()
        site.set_bot_status("exited", code=code, reason=describe_exit(code))
        say(f"THE BOT PROCESS EXITED ({describe_exit(code)}); see its log above.")
        say("The page stays up so you can look at it; Ctrl-C to quit.")
        await stop.wait()
        return 1
    finally:
        say("stopping...")
        for task in tasks:
            task.cancel()
        await bot.stop()
        await emulator.stop()
        say("stopped")


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # The bot's log has non-ASCII text; a non-UTF-8 console must not crash us.
        sys.stdout.reconfigure(errors="backslashreplace")
    with sandbox_store(args.data_dir) as data_dir:
        try:
            code = asyncio.run(serve(args, data_dir))
        except KeyboardInterrupt:  # only where signal handlers are unavailable
            code = 130
    sys.exit(code)


if __name__ == "__main__":
    main()
