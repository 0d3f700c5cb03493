#!/bin/bash
# Alternated base/new rounds: pack_to_budget CPU replay, then pack+gate in the live path at 80/1500/5000.
cd /tmp/h-pack3-work
PY=/work/main/.venv/bin/python
run() {  # side round
  if [ $1 = base ]; then R=/tmp/h-pack3-base; ST=/tmp/h-pack3-sb; else R=/work/h-pack3; ST=/tmp/h-pack3-sn; fi
  PYTHONPATH=$R/src:$R/lab $PY replay.py inputs.pkl --passes 2 --out ab/replay-$1-$2.json >/dev/null 2>&1
  for tok in 80 1500 5000; do
    PYTHONPATH=$R/src:$R/lab $PY stage_rounds.py $ST/store-100000-e352f5f40cada0c8.sqlite $tok ab/stage-$1-$2-$tok.json >/dev/null 2>&1
  done
  echo "$(date -u +%T) $1 round $2 load $(cut -d' ' -f1 /proc/loadavg)"
}
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then run base $r; run new $r; else run new $r; run base $r; fi
done
