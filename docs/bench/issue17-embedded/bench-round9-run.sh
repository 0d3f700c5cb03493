#!/bin/sh
# base f54e549 and main alternated, each on its own store copy
cd /work/main
for r in 1 2 3; do
  PYTHONPATH=/tmp/lead/base/src:/tmp/lead/base/lab .venv/bin/python -m graphctx.cli.main bench store --sizes 100000 --queries 100 --store-dir /tmp/ab/base --data /work/shared/data --out /tmp/ab/out-base$r > /tmp/ab/base$r.log 2>&1
  PYTHONPATH=/work/main/src:/work/main/lab .venv/bin/python -m graphctx.cli.main bench store --sizes 100000 --queries 100 --store-dir /tmp/ab/new --data /work/shared/data --out /tmp/ab/out-new$r > /tmp/ab/new$r.log 2>&1
done
echo done > /tmp/ab/finished
