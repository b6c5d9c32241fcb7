#!/bin/sh
# Every match of the computer players' strength goals (issue 14): mirrored deals, a
# seeded random order among players who may act at once (like a real table), 2,000
# games per match (1,000 for six players and partners), then the goals table.
# Usage: bench/ai_strength.sh [jobs] [minutes]   (defaults: 1 job, no time limit)
# Chunks are saved under bench/results/ai_strength/<code>/ as they finish, so a run
# that stops (or is given minutes) is continued by the next one; see bench/ai_strength.py.
set -e
cd "$(dirname "$0")/.."
JOBS=${1:-1}
MINUTES=${2:-0}
.venv/bin/python bench/ai_strength.py run --jobs "$JOBS" --minutes "$MINUTES"
.venv/bin/python bench/ai_strength.py report
