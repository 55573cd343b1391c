#!/usr/bin/env bash
# Measures connected-components queries during the stream: main-node on
# Kronecker streams with K evenly spaced queries (plus the final answer),
# on one machine and as 1 main node + 2 workers on loopback. Each K > 0 run
# is paired with a no-query run of the same setup just before it, and
# "kept" is the ratio of the two rates, so that a shared machine's load
# changes between pairs cancel out. Writes a dated Markdown table to
# results/queries-<date>.md: rate (updates / time from start of ingestion
# to the end of the final query's wait), kept, greedy answers, and per
# mid-stream query the wait for batches (flush) and the CC time, median and
# max; every answer is checked against the generator's final component
# count, and each mid-stream answer is exact by the tests (cc, e2e).
#
# Usage: results/bench-queries.sh [SCALE ...]     (default: 13 15)
# Env:   DATA=dir for generated streams (default /tmp/sketchcc-data)
#        COUNTS="0 2 10 20 100 1000" query counts; SETUPS="local cluster"
#        PAIRS=3 paired runs per count; OUT=file (default results/queries-<date>.md)
#        LOCK=file taken around each run (default /tmp/sketchcc-bench.lock)
# Needs go and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
scales=("$@")
[ $# -eq 0 ] && scales=(13 15)
data=${DATA:-/tmp/sketchcc-data}
counts=(${COUNTS:-2 10 20 100 1000})
setups=(${SETUPS:-local cluster})
pairs=${PAIRS:-3}
lock=${LOCK:-/tmp/sketchcc-bench.lock}
mkdir -p "$data"
bin=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$bin"; }
trap cleanup EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/worker ./cmd/streamtool

date=$(date -u +%Y-%m-%d)
out=${OUT:-results/queries-$date.md}
cpu=$(cpu_name)
{
	echo "# Queries during the stream, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM; shared with other jobs (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "- $(go version)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')"
	echo "- local: \`main-node --stream kronN.bin --json --queries K+1\`; cluster: the same with \`--listen 127.0.0.1:0 --expect-workers 2 --local-workers 0\`"
	echo "  and 2 × \`worker --join ADDR --threads 1\` on the same machine"
	echo "- rate = updates / (start of ingestion → end of the final query's wait for batches), mid-stream queries included;"
	echo "  kept = median over $pairs pairs of rate / rate of a no-query run of the same setup run just before it, so that"
	echo "  load changes between pairs cancel out; the rates shown are medians over the pairs; CPU kept = the same ratio"
	echo "  of the main node's CPU seconds (user + system; no-query / with queries; in the cluster the workers' are not counted),"
	echo "  which other jobs on the machine"
	echo "  disturb much less than the wall clock; kept, final CC counted = the ratio of (end-to-end time + the final"
	echo "  query's CC time): with several queries the final answer needs no flush and its work is in CC"
	echo "- flush = the query's wait for the batches handed out (with several queries the greedy shortcut is kept from"
	echo "  the first update, so no query flushes the gutters); CC = Boruvka (with the re-opened pieces' buffered ids)"
	echo "  and labelling; median / max over the mid-stream queries, in seconds"
	echo "- Landscape (Tench et al., ALENEX 2025, kron17, 80 workers): no queries 133 M/s; 20 queries 37 M/s (28% kept);"
	echo "  1,000 queries about 1 M/s and not finished; 5–9 s per query, almost all of it flushing the gutters"
	echo
} >"$out.tmp"

# run SETUP STREAM K OUT: one main-node run (and its workers) writing --json
# to OUT, under the machine's benchmark lock (held by fd 9 for the run only,
# so that other jobs' runs interleave with this script's).
run() {
	exec 9>>"$lock"
	flock 9
	run1 "$@"
	flock -u 9
	exec 9>&-
}

run1() {
	local setup=$1 f=$2 k=$3 o=$4
	if [ "$setup" = local ]; then
		/usr/bin/time -o "$o.cpu" -f "%U %S" "$bin/main-node" --stream "$f" --json --progress never --queries $((k + 1)) >"$o"
		return
	fi
	/usr/bin/time -o "$o.cpu" -f "%U %S" "$bin/main-node" --stream "$f" --listen 127.0.0.1:0 --expect-workers 2 --local-workers 0 \
		--json --progress never --log-level info --queries $((k + 1)) >"$o" 2>"$bin/main.log" &
	pids=("$!")
	local addr
	addr=$(main_addr "$bin/main.log") || exit 1
	for w in 1 2; do
		"$bin/worker" --join "$addr" --listen 127.0.0.1:0 --threads 1 2>"$bin/w$w.log" &
		pids+=("$!")
	done
	wait "${pids[@]}"
	pids=()
}

for s in "${scales[@]}"; do
	f=$(kron_stream "$bin/streamtool" "$data" "$s")
	want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["components"])' "$f.gen.json")
	for setup in "${setups[@]}"; do
		for k in "${counts[@]}"; do
			rm -f "$bin"/base-*.json "$bin"/run-*.json
			for i in $(seq "$pairs"); do
				run "$setup" "$f" 0 "$bin/base-$i.json"
				run "$setup" "$f" "$k" "$bin/run-$i.json"
			done
			python3 - "$bin" "$pairs" "kron$s" "$setup" "$k" "$want" >>"$bin/rows-$setup" <<'PY'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
name, setup, k, want = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
pairs = [(json.load(open(f"{d}/base-{i}.json")), json.load(open(f"{d}/run-{i}.json"))) for i in range(1, n + 1)]
for base, run in pairs:
    for j in (base, run):
        if j["components"] != want:
            sys.exit(f"{name} {setup}: {j['components']} components, the generator says {want}")
med = statistics.median
r0 = med(b["updates_per_second"] for b, _ in pairs)
r = med(x["updates_per_second"] for _, x in pairs)
kept = med(x["updates_per_second"] / b["updates_per_second"] for b, x in pairs)
# The same ratio with the final answer's CC time counted too: a run that
# keeps the greedy shortcut answers last without a flush, with the work in CC.
def whole(j):
    return j["end_to_end_seconds"] + j["queries"][-1]["cc_seconds"]
keptall = med(whole(b) / whole(x) for b, x in pairs)
def cpu(kind, i):
    return sum(map(float, open(f"{d}/{kind}-{i}.json.cpu").read().split()[-2:]))
cpukept = med(cpu("base", i) / cpu("run", i) for i in range(1, n + 1))
mid = [q for _, x in pairs for q in x["queries"][:-1]]
def mm(key):
    xs = [q[key] for q in mid] or [0]
    return f"{med(xs):.6f} / {max(xs):.4f}"
greedy = sum(q["greedy"] for q in mid)
print(f"| {name} | {k} | on | {r/1e6:.2f} M | {r0/1e6:.2f} M | {100*kept:.0f}% | {100*keptall:.0f}% | {100*cpukept:.0f}% | {greedy} of {len(mid)} | "
      f"{mm('flush_seconds')} | {mm('cc_seconds')} |")
PY
			tail -1 "$bin/rows-$setup" >&2
		done
	done
done
# One table per setup, local first (results/plot draws the first).
for setup in "${setups[@]}"; do
	[ -f "$bin/rows-$setup" ] || continue
	{
		echo
		echo "## $setup"
		echo
		echo "| stream | queries during stream | greedy | updates/s | no-query updates/s | kept | kept, final CC counted | CPU kept | greedy answers | flush s median / max | CC s median / max |"
		echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		cat "$bin/rows-$setup"
	} >>"$out.tmp"
done
mv "$out.tmp" "$out"
echo "wrote $out" >&2
