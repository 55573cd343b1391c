#!/usr/bin/env bash
# Measures connected-components queries during the stream: main-node on
# Kronecker streams with 0, 2, 10, 20 and 100 queries spread over the
# stream (plus the final answer), greedy shortcut on and off. Writes a
# dated Markdown table to results/queries-<date>.md: overall ingestion rate
# (updates / time from start to the final flush, queries included), the
# share of the no-query rate it retains, and per-query flush, CC and total
# seconds (median and max over the mid-stream queries).
#
# Usage: results/bench-queries.sh [SCALE ...]     (default: 13 15)
# Env:   DATA=dir for generated streams (default /tmp/sketchcc-data)
# Needs go and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
scales=("$@")
[ $# -eq 0 ] && scales=(13 15)
data=${DATA:-/tmp/sketchcc-data}
mkdir -p "$data"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/streamtool

date=$(date -u +%Y-%m-%d)
out=results/queries-$date.md
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
	echo "# Queries during the stream, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM"
	echo "- $(go version)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')"
	echo "- command: \`main-node --stream kronN.bin --json --queries K+1 [--no-greedy]\`: K evenly spaced queries during the stream plus the final one"
	echo "- rate = updates / (start of ingestion → end of the final flush), mid-stream queries included; retained = rate / rate with no mid-stream query (best of 3 runs); other rows are single runs"
	echo "- load: $(uptime | sed 's/.*load/load/')"
	echo
	echo "| stream | queries during stream | greedy | updates/s | retained | greedy answers | flush s median / max | CC s median / max | total s median / max |"
	echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
} >"$out.tmp"
for s in "${scales[@]}"; do
	f=$(kron_stream "$bin/streamtool" "$data" "$s")
	base=""
	for k in 0 2 10 20 100; do
		for g in on off; do
			[ "$k" = 0 ] && [ "$g" = off ] && continue
			flag=""; [ "$g" = off ] && flag=--no-greedy
			# The no-query baseline is the best of three runs (the first also
			# warms the page cache; on a shared VM noise only slows a run
			# down, so the best is the fairest reference); the others run once.
			reps=1; [ "$k" = 0 ] && reps=3
			for r in $(seq 1 $reps); do
				"$bin/main-node" --stream "$f" --json --progress never --queries $((k + 1)) $flag >"$bin/run$r.json"
			done
			python3 - "$bin" $reps <<'PY'
import json, shutil, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
runs = sorted((json.load(open(f"{d}/run{r}.json"))["updates_per_second"], r) for r in range(1, n + 1))
shutil.copy(f"{d}/run{runs[-1][1]}.json", f"{d}/run.json")
PY
			base=$(python3 - "$bin/run.json" "kron$s" "$k" "$g" "$base" 3>&1 >>"$out.tmp" <<'PY'
import json, os, statistics, sys
j = json.load(open(sys.argv[1]))
name, k, g, base = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
rate = j["updates_per_second"]
base = float(base) if base else rate
mid = j["queries"][:-1] or j["queries"]
def mm(key):
    xs = [q[key] for q in mid]
    return f"{statistics.median(xs):.4f} / {max(xs):.4f}"
greedy = sum(q["greedy"] for q in mid) if k else 0
print(f"| {name} | {k} | {g} | {rate/1e6:.2f} M | {100*rate/base:.0f}% | {greedy} of {k} | "
      f"{mm('flush_seconds')} | {mm('cc_seconds')} | {mm('total_seconds')} |")
os.write(3, f"{base}".encode())
PY
)
			tail -1 "$out.tmp" >&2
		done
	done
done
mv "$out.tmp" "$out"
echo "wrote $out" >&2
