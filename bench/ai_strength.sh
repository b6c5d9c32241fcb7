#!/bin/sh
# Strength goals of issue 3 (2 players, 36 cards, mirrored deals), then 1 Hard + 3 Normal.
# Usage: bench/ai_strength.sh [games] [jobs]   (defaults: 2000 games, 1 job)
set -e
cd "$(dirname "$0")/.."
GAMES=${1:-2000}
JOBS=${2:-1}
PY=.venv/bin/python
$PY -m ai.arena normal easy --games "$GAMES" --jobs "$JOBS" --seed 1
$PY -m ai.arena hard normal --games "$GAMES" --jobs "$JOBS" --seed 2
$PY -m ai.arena hard easy --games "$GAMES" --jobs "$JOBS" --seed 3
$PY -m ai.arena hard normal normal normal --games "$GAMES" --jobs "$JOBS" --seed 4
