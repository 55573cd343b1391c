#!/usr/bin/env bash
# Before/after check of the main node's core reshape: the hot-path
# benchmarks (sketch ApplyBatch, gutters InsertBatch, ingest Ingest, the
# CC Query) with benchstat, and main-node end to end on kron13/kron15, both
# interleaved run by run so that load on a shared machine hits both sides
# alike. Every run holds /tmp/sketchcc-bench.lock.
#
# Usage: results/bench-core.sh BASE_COMMIT [KRON_DIR]
#   BASE_COMMIT  the commit to compare the working tree with
#   KRON_DIR     holds kron13.bin and kron15.bin (default /tmp/kron)
# Env: COUNT=6 benchmark runs per side; E2E=3 end-to-end runs per side.
# Writes results/core-<date>.md. The Query benchmark lives in package cc
# after the reshape and in ingest before it; its pkg line is renamed so
# that benchstat pairs the two.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
base=$1
kron=${2:-/tmp/kron}
count=${COUNT:-6}
e2e=${E2E:-3}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$base" >/dev/null
lock() { flock /tmp/sketchcc-bench.lock "$@"; }

build() { # build DIR OUTDIR
	(cd "$1" && go test -c -o "$2/sketch.test" ./sketch && go test -c -o "$2/gutters.test" ./gutters &&
		go test -c -o "$2/ingest.test" ./ingest && go build -o "$2/main-node" ./cmd/main-node)
	if [ -d "$1/cc" ]; then (cd "$1" && go test -c -o "$2/query.test" ./cc); else cp "$2/ingest.test" "$2/query.test"; fi
}
mkdir -p "$work/old" "$work/new"
build "$work/base" "$work/old"
build . "$work/new"

bench() { # bench SIDE
	local d=$work/$1
	(cd sketch && lock "$d/sketch.test" -test.run='^$' -test.bench='^BenchmarkApplyBatch$' -test.count=1) >>"$work/$1.txt"
	(cd gutters && lock "$d/gutters.test" -test.run='^$' -test.bench='^BenchmarkInsertBatch$' -test.count=1) >>"$work/$1.txt"
	(cd ingest && lock "$d/ingest.test" -test.run='^$' -test.bench='^BenchmarkIngest$' -test.count=1) >>"$work/$1.txt"
	(cd ingest && lock "$d/query.test" -test.run='^$' -test.bench='^BenchmarkQuery$' -test.count=1) |
		sed 's#^pkg: sketchcc/cc#pkg: sketchcc/ingest#' >>"$work/$1.txt"
}
for i in $(seq "$count"); do
	echo "benchmarks, round $i of $count" >&2
	bench old
	bench new
done

runs=$work/e2e.tsv
for s in 13 15; do
	for i in $(seq "$e2e"); do
		for side in old new; do
			echo "kron$s $side run $i" >&2
			lock "$work/$side/main-node" --stream "$kron/kron$s.bin" --json --progress never >"$work/run.json"
			python3 - "$work/run.json" "kron$s" "$side" "$i" >>"$runs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], str(d["components"]),
                 "%.2f" % (d["updates_per_second"] / 1e6), "%.3f" % d["end_to_end_seconds"],
                 "%.3f" % d["flush_seconds"], "%.4f" % d["cc_seconds"], str(d["peak_rss_bytes"] >> 20)]))
PY
		done
	done
done

date=$(date -u +%Y-%m-%d)
out=$(dated_table core)
{
	echo "# Core reshape: before and after, $date"
	echo
	echo "- machine: $(cpu_name), $(nproc) cores, shared with other jobs; every run held /tmp/sketchcc-bench.lock, which other jobs' unlocked tests do not respect"
	echo "- $(go version)"
	echo "- old: $(git rev-parse --short "$base"); new: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')"
	echo "- benchmarks: $count runs per side, interleaved (old, new, old, new, …); end to end: $e2e runs per side, interleaved"
	echo "- load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "## Benchmarks (benchstat old new)"
	echo
	echo '```'
	~/go/bin/benchstat old="$work/old.txt" new="$work/new.txt"
	echo '```'
	echo
	echo "## main-node end to end (\`main-node --stream kronN.bin --json\`, one query at the end)"
	echo
	echo "| stream | side | run | components | updates/s (M) | end to end s | flush s | CC s | peak RSS MiB |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
	sed 's/\t/ | /g; s/^/| /; s/$/ |/' "$runs"
} >"$out"
echo "wrote $out" >&2
