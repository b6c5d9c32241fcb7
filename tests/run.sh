#!/usr/bin/env bash
# The whole test command: installs what the tests need, then lint, types and pytest.
# Used by developers (README) and by CI (.ci/run). Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# redis-cli builds the Redis Cluster of tests/test_cluster.py (Debian: redis-tools).
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# The browser tests' screenshots show emoji (🤖, ⚙️, 📖) as a phone does, not as boxes.
fc-list 2>/dev/null | grep -qi "Noto Color Emoji" || need_apt+=(fonts-noto-color-emoji)
if ((${#need_apt[@]})); then
  echo "tests/run.sh: installing ${need_apt[*]} from Debian's packages" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# pip's own chatter (build warnings, ignored index locations) goes to a log, shown only when
# pip fails, so the run's output is the lint, type and test results.
pip_log=$(mktemp)
if ! { .venv/bin/python -m pip install -q --upgrade pip &&
  .venv/bin/python -m pip install -q -e ".[dev]"; } >"$pip_log" 2>&1; then
  cat "$pip_log" >&2
  exit 1
fi
rm -f "$pip_log"

echo "== ruff" && .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== mypy" && .venv/bin/mypy
echo "== import contracts" && .venv/bin/lint-imports --no-cache
# The whole run has a ceiling well under CI's 90 minutes (it takes about 8): SIGINT makes pytest
# print what ran and what hung before it stops, rather than CI cutting it off silently.
echo "== pytest" && timeout --signal=INT --kill-after=60 2700 .venv/bin/pytest -q "$@"
