#!/bin/sh
# Replay the recorded inputs on base and new, alternated, ROUNDS rounds; one JSON per run.
# usage: rounds.sh BASE_TREE NEW_TREE INPUTS OUT_DIR [ROUNDS]
set -e
base=$1; new=$2; inputs=$3; out=$4; rounds=${5:-5}
py=/work/main/.venv/bin/python
here=$(dirname "$0")
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  uptime >> "$out/load.txt"
  PYTHONPATH=$base/src:$base/lab $py "$here/../pack-round10/replay.py" "$inputs" --budgets 1500,80,5000 --passes 2 --out "$out/replay-base-$r.json" > /dev/null 2>&1
  PYTHONPATH=$new/src:$new/lab $py "$here/../pack-round10/replay.py" "$inputs" --budgets 1500,80,5000 --passes 2 --out "$out/replay-new-$r.json" > /dev/null 2>&1
done
uptime >> "$out/load.txt"
