#!/bin/bash
# base/new/new/base on the marked copy of the 100k store
set -e
for round in "$@"; do
  for tree in $round; do
    if [ $tree = base ]; then PP=/tmp/h-relev-base/src:/tmp/h-relev-base/lab; else PP=/work/h-relev/src:/work/h-relev/lab; fi
    n=$(ls -d /tmp/h-relev/bench-$tree-*/ 2>/dev/null | wc -l)
    out=/tmp/h-relev/bench-$tree-$((n+10))
    echo "$(date -u +%T) $tree -> $out $(uptime | sed 's/.*average/load/')"
    PYTHONPATH=$PP /work/main/.venv/bin/graphctx bench store --sizes 100000 --queries 100 \
      --store-dir /tmp/h-relev-marked --data /work/shared/data --out $out > $out.log 2>&1
  done
done
