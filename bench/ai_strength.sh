#!/bin/sh
# Every match of the computer players' strength goals (issue 14), mirrored deals, with
# a seeded random order among players who may act at once (like a real table).
# Usage: bench/ai_strength.sh [games] [jobs] [seed]   (defaults: 2000 games, 1 job, seed 1)
# Six-player and partners matches play half the games (issue 14: 1,000 for 2,000).
set -e
cd "$(dirname "$0")/.."
GAMES=${1:-2000}
JOBS=${2:-1}
SEED=${3:-1}
# The counted budget decides, not the load of a shared machine (the 0.8 s cap
# stays the default everywhere else).
CAP=${CAP:-5}
HALF=$((GAMES / 2))
PY=.venv/bin/python
arena() {
  SEED=$((SEED + 1))
  $PY -m ai.arena "$@" --jobs "$JOBS" --seed "$SEED" --hard-time-cap "$CAP"
  echo
}
# 2 players
arena normal easy --rules classic --games "$GAMES"
arena hard normal --rules classic --games "$GAMES"
arena hard easy --rules classic --games "$GAMES"
for rules in perevodnoy short full_deck; do
  arena hard normal --rules "$rules" --games "$GAMES"
  arena normal easy --rules "$rules" --games "$GAMES"
done
# 4 and 6 players: Hard among Normal players
for rules in classic neighbours perevodnoy; do
  arena hard normal normal normal --rules "$rules" --games "$GAMES"
done
arena hard normal normal normal normal normal --rules classic --games "$HALF"
# Partners (team = seat % 2): when the engine has the partners variant
if $PY -c 'import sys; from engine import Rules; sys.exit(0 if "partners" in Rules.model_fields else 1)'; then
  arena hard normal hard normal --partners --rules classic --games "$HALF"
  arena hard normal hard normal hard normal --partners --rules classic --games "$HALF"
  arena normal easy normal easy --partners --rules classic --games "$HALF"
fi
