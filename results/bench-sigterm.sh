#!/usr/bin/env bash
# Measures how long a main node takes to exit on SIGTERM (issue 29, item 9):
#   flush: a cluster's final flush: kron12 with gutters that hold the whole
#          stream and one single-thread worker behind, so that the final
#          query's wait for the worker's 4,096 batches lasts seconds;
#   query: a final query on a main node alone: a sparse Erdős–Rényi
#          graph of 2^17 vertices, whose final query (flush of the local
#          gutters, then Boruvka) lasts about 6 s.
# In each run the signal goes as soon as the metrics say the whole stream
# has been read (polled every 20 ms); the exit time is from the signal to the exit (bash wait).
# Prints one line per run and a min / median / max line per case.
#
# Usage: results/bench-sigterm.sh [RUNS]     (default 10)
# Env:   DATA=dir for generated streams (default /tmp/sketchcc-data)
#        CASES="flush query"
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
runs=${1:-10}
data=${DATA:-/tmp/sketchcc-data}
cases=(${CASES:-flush query})
mkdir -p "$data"
bin=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$bin"; }
trap cleanup EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/worker ./cmd/streamtool
kron=$(kron_stream "$bin/streamtool" "$data" 12)
er=$data/erdos17-sparse.bin
if [ ! -f "$er" ]; then
	echo "generating $er (a few minutes: the generator scans the vertex pairs)" >&2
	"$bin/streamtool" gen erdos --vertices 131072 --density 0.00002 --no-cum -o "$er" >"$er.gen.json"
fi

# metric ADDR NAME: prints the value of a metric without labels, or nothing.
metric() { curl -s "http://$1/metrics" 2>/dev/null | sed -n "s/^$2 \([0-9.e+]*\)$/\1/p"; }

# wait_read LOG TOTAL: waits until the main node whose log is LOG has read
# TOTAL updates (its metrics address is in LOG).
wait_read() {
	local addr
	for _ in $(seq 400); do
		addr=$(sed -n 's/.*msg="metrics listening" addr=\([^ ]*\).*/\1/p' "$1" | head -1)
		[ -n "$addr" ] && break
		sleep 0.05
	done
	for _ in $(seq 2000); do
		local n
		n=$(metric "$addr" sketchcc_updates_read_total)
		[ -n "$n" ] && [ "$(printf '%.0f' "$n")" -ge "$2" ] && return 0
		sleep 0.02
	done
	echo "the main node did not read $2 updates:" >&2
	cat "$1" >&2
	return 1
}

header_updates() { od -An -t u8 -j 4 -N 8 "$1" | tr -d ' '; }

# one CASE LOG: runs the case once and prints the exit time in seconds.
one() {
	local log=$2 args=() main worker=
	case $1 in
	flush) args=(--stream "$kron" --listen 127.0.0.1:0 --gossip-local --expect-workers 1 --local-workers 0
		--sketch-factor 3 --batch-factor 1 --credits 4096) ;;
	query) args=(--stream "$er") ;;
	esac
	"$bin/main-node" "${args[@]}" --metrics-listen 127.0.0.1:0 --progress never --log-level info --json \
		>/dev/null 2>"$log" &
	main=$!
	pids+=("$main")
	if [ "$1" = flush ]; then
		"$bin/worker" --join "$(main_addr "$log")" --listen 127.0.0.1:0 --gossip-local --threads 1 \
			2>"$log.worker" &
		worker=$!
		pids+=("$worker")
	fi
	wait_read "$log" "$(header_updates "${args[1]}")"
	local t0 t1
	t0=$(date +%s.%N)
	kill -TERM "$main"
	wait "$main" || true
	t1=$(date +%s.%N)
	[ -n "$worker" ] && { wait "$worker" || true; }
	if grep -q 'msg=query ' "$log"; then echo "warning: the final query had finished before the signal" >&2; fi
	echo "$t1 - $t0" | bc -l
}

echo "cpu: $(cpu_name); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $(go version); commit: $(git rev-parse --short HEAD)"
tmp=$(mktemp -d)
for c in "${cases[@]}"; do
	ts=()
	for i in $(seq "$runs"); do
		t=$(one "$c" "$tmp/$c-$i.log")
		ts+=("$t")
		printf '%s run %d: %.3f s (%s)\n' "$c" "$i" "$t" "$(grep -o 'error: .*' "$tmp/$c-$i.log" | tail -1 | cut -c1-90)"
	done
	printf '%s\n' "${ts[@]}" | sort -g | awk -v c="$c" '{a[NR]=$1} END {
		m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2
		printf "%s: %d runs, exit after SIGTERM min %.3f / median %.3f / max %.3f s\n", c, NR, a[1], m, a[NR]}'
done
rm -rf "$tmp"
