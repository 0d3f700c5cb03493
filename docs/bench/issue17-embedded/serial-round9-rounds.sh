#!/bin/bash
# alternated rounds: base (f54e549) and new (h-rel), each on its own copy of the 100k store
cd /tmp/h-rel
for r in ${ROUNDS:-1 2 3 4 5}; do  # rounds 6-9 ran with ROUNDS="6 7 8 9"
  if [ $((r % 2)) -eq 1 ]; then order="base new"; else order="new base"; fi
  for side in $order; do
    if [ $side = base ]; then pp=/tmp/h-rel/base-tree/src:/tmp/h-rel/base-tree/lab; else pp=/tmp/h-rel/new-tree/src:/tmp/h-rel/new-tree/lab; fi
    PYTHONPATH=$pp /work/main/.venv/bin/python replay.py $side/store.sqlite --timings out/round$r-$side.json > out/round$r-$side.log 2>&1
    echo "round $r $side $(uptime | sed 's/.*load/load/')"
  done
done
