#!/bin/sh
# graphctx bench store on the shared 100k store (read-only reuse), base and new alternated:
# base new new base (ROUNDS pairs); one JSON per run and the load before each.
# usage: bench_rounds.sh BASE_TREE NEW_TREE OUT_DIR [PAIRS]
base=$1; new=$2; out=$3; pairs=${4:-2}
py=/work/main/.venv/bin/python
mkdir -p "$out"
run() {  # side tree n
  echo "$(date -u +%T) $1 $3 $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/load.txt"
  PYTHONPATH=$2/src:$2/lab $py -m graphctx.cli.main bench store --sizes 100000 --queries 100 \
    --store-dir /tmp/s100k --data /work/shared/data --out "$out/$1-$3" > "$out/$1-$3.log" 2>&1
}
for p in $(seq 1 "$pairs"); do
  if [ $((p % 2)) = 1 ]; then run base "$base" "$p"; run new "$new" "$p"; else run new "$new" "$p"; run base "$base" "$p"; fi
done
echo "$(date -u +%T) end $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/load.txt"
