#!/bin/bash
# base on /tmp/s100k (read-only reuse), new on its own migrated copy (schema 4), alternated
for round in ${ROUNDS:-1 2}; do
  for leg in base new; do
    if [ $leg = base ]; then tree=/tmp/h-embft2-base; store=/tmp/s100k; else tree=${NEW_TREE:-/tmp/h-embft2-b}; store=/tmp/h-embft2-s4; fi
    echo "$leg $round start $(uptime)"
    PYTHONPATH=$tree/src:$tree/lab /work/main/.venv/bin/graphctx bench store --sizes 100000 --queries 100 \
      --store-dir $store --data /work/shared/data --out /tmp/h-embft2-bench/$leg-$round > /tmp/h-embft2-bench/$leg-$round.log 2>&1
    echo "$leg $round end $(uptime)"
  done
done
