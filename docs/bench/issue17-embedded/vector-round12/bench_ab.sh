#!/bin/sh
# Whole store bench at 100k, base (3784a55) and new alternated, on the shared store read-only.
for r in ${ROUNDS:-1 2}; do
  for side in base new; do
    if [ $side = base ]; then P=/tmp/h-vec8-base/src:/tmp/h-vec8-base/lab; else P=/tmp/h-vec8/pkgs:/work/h-vec8/src:/work/h-vec8/lab; fi
    echo "$side $r start $(date -u +%T) $(cat /proc/loadavg)"
    PYTHONPATH=$P /work/main/.venv/bin/graphctx bench store --sizes 100000 --queries 100 \
      --store-dir /tmp/s100k --data /work/shared/data --out /tmp/h-vec8/bench-$side$r > /tmp/h-vec8/bench-$side$r.log 2>&1
    echo "$side $r end $(date -u +%T) $(cat /proc/loadavg) rc=$?"
  done
done
