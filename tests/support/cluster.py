"""A real Redis Cluster for tests: three masters with one replica each, on loopback."""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MASTERS = 3
NODE_OPTIONS = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
NODE_OPTIONS += ("--cluster-node-timeout", "2000", "--save", "", "--appendonly", "no")


@dataclass
class Cluster:
    ports: list[int]
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """Any one node is enough for a cluster client to find the others."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def cli(self, port: int, *args: str) -> str:
        done = subprocess.run(
            ["redis-cli", "-p", str(port), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout

    def masters(self) -> list[int]:
        """Ports of the nodes that are masters now."""
        found = []
        for line in self.cli(self.ports[0], "cluster", "nodes").splitlines():
            parts = line.split()
            flags = parts[2].split(",")
            if "master" in flags and "fail" not in flags and "fail?" not in flags:
                found.append(int(parts[1].split(":")[1].split("@")[0]))
        return found


def _start_node(binary: str, port: int, folder: Path) -> subprocess.Popen[bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", *NODE_OPTIONS, "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@contextlib.contextmanager
def redis_cluster(folder: Path) -> Iterator[Cluster]:
    binary, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if binary is None or cli is None:  # never skip silently: tests/run.sh installs them
        raise RuntimeError("redis-server/redis-cli are not installed (apt-get install redis)")
    cluster = Cluster(_cluster_ports(MASTERS * 2))
    try:
        for port in cluster.ports:
            cluster.processes[port] = _start_node(binary, port, folder / str(port))
        for port in cluster.ports:
            _wait(lambda p=port: _pong(cluster, p), f"node {port}")
        nodes = [f"127.0.0.1:{port}" for port in cluster.ports]
        cluster.cli(
            cluster.ports[0],
            "--cluster",
            "create",
            *nodes,
            "--cluster-replicas",
            "1",
            "--cluster-yes",
        )
        for port in cluster.ports:
            _wait(lambda p=port: "cluster_state:ok" in cluster.cli(p, "cluster", "info"), "ok")
        yield cluster
    finally:
        for proc in cluster.processes.values():
            proc.terminate()
        for proc in cluster.processes.values():
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()


def _cluster_ports(count: int) -> list[int]:
    """Ports whose cluster-bus twin (port + 10000) is free too; both below 65536."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randint(20000, 50000)
        if port not in ports and _free(port) and _free(port + 10000):
            ports.append(port)
    return ports


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _pong(cluster: Cluster, port: int) -> bool:
    try:
        return "PONG" in cluster.cli(port, "ping")
    except subprocess.CalledProcessError:
        return False


def _wait(ready: object, what: str, timeout: float = 30.0) -> None:
    assert callable(ready)
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"redis cluster: {what} not ready")
        time.sleep(0.1)  # external processes: nothing to await
