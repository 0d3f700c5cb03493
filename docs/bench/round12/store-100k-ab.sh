#!/bin/bash
# base (3784a55) and new (main) whole store bench at 100k, alternated: base new new base
cd /work/main
PY=/work/main/.venv/bin/python
run() { # tree storedir out
  (uptime; date) > $3.load
  PYTHONPATH=$1/src:$1/lab $PY -m graphctx.cli.main bench store --sizes 100000 --queries 100 --store-dir $2 --data /work/shared/data --out $3 > $3.log 2>&1
  (uptime; date) >> $3.load
}
O=${OUT:-/tmp/r12/store}
mkdir -p $O
run /tmp/r12/base /tmp/s100k $O/base1
run /work/main /tmp/r12/s100k-new $O/new1
run /work/main /tmp/r12/s100k-new $O/new2
run /tmp/r12/base /tmp/s100k $O/base2
echo done > $O/done
