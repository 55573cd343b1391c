#!/usr/bin/env bash
# Runs 1 main node + k workers (k = 1, 2, 4) on loopback, and the main node
# alone, on Kronecker streams, and writes a dated Markdown table of
# updates/s, network bytes per update, batches sketched on the main node
# vs by workers, and main-node and worker peak RSS to
# results/cluster-<date>.md.
#
# Usage: results/bench-cluster.sh [SCALE ...]     (default: 13)
# Env:   DATA=dir for generated streams (default /tmp/sketchcc-data)
#        WORKERS="1 2 4" worker counts; THREADS=1 delta goroutines per worker;
#        RUNS=3 runs of each setup
# Streams are generated with `streamtool gen kron --scale N --seed 1` when
# missing. Needs go and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
scales=("${@:-13}")
data=${DATA:-/tmp/sketchcc-data}
ks=(${WORKERS:-1 2 4})
threads=${THREADS:-1}
runs=${RUNS:-3}
mkdir -p "$data"
bin=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$bin"; }
trap cleanup EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/worker ./cmd/streamtool

date=$(date -u +%Y-%m-%d)
out=$(dated_table cluster)
cpu=$(cpu_name)
{
	echo "# main node + workers on loopback, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM; main node and workers share it"
	echo "- $(go version)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')"
	echo "- cluster: \`main-node --stream kronN.bin --listen 127.0.0.1:0 --expect-workers k --local-workers 0 --json\`"
	echo "  and k × \`worker --join ADDR --listen 127.0.0.1:0 --threads $threads\`; local only: \`main-node --stream kronN.bin --json\` (all cores)"
	echo "- updates/s end to end (reading the stream to sketches that answer the query); network bytes per update ="
	echo "  data-plane bytes sent + received / stream updates; batches local / remote: sketched on the main node (local"
	echo "  cut-off, fallback) / merged from workers, the query's final drain of the gutters aside; RSS = peak resident set"
	echo "- $runs runs of each setup, one row each; other processes may share the machine (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))"
	echo
	echo "| stream | setup | components | updates/s | network B/update | batches local / remote | re-sent | main RSS | worker RSS (max) |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$out.tmp"

row() { # stream setup json [worker logs...]
	python3 - "$@" >>"$out.tmp" <<'PY'
import json, re, sys
stream, setup, path, *logs = sys.argv[1:]
j = json.load(open(path))
rss = [int(m.group(1)) for l in logs for m in re.finditer(r"peak_rss_bytes=(\d+)", open(l).read())]
local = j.get("local_cutoff_batches", 0) + j.get("fallback_batches", 0)
remote = j.get("remote_batches", 0)
nb = f"{j['network_bytes_per_update']:.1f}" if "network_bytes_per_update" in j else "0"
batches = f"{local:,} / {remote:,}" if "remote_batches" in j else "all local"
print(f"| {stream} | {setup} | {j['components']} | {j['updates_per_second']/1e6:.2f} M | {nb} | {batches} | "
      f"{j.get('batches_resent', 0)} | {j['peak_rss_bytes']/2**20:.0f} MiB | "
      f"{(max(rss)/2**20 if rss else 0):.0f} MiB |")
PY
	tail -1 "$out.tmp" >&2
}

for s in "${scales[@]}"; do
	f=$(kron_stream "$bin/streamtool" "$data" "$s")
	for _ in $(seq "$runs"); do
		"$bin/main-node" --stream "$f" --json --progress never >"$bin/local.json"
		row "kron$s" "local only" "$bin/local.json"
	done
	for k in "${ks[@]}"; do
		for _ in $(seq "$runs"); do
			"$bin/main-node" --stream "$f" --listen 127.0.0.1:0 --expect-workers "$k" --local-workers 0 \
				--json --progress never --log-level info >"$bin/main.json" 2>"$bin/main.log" &
			pids=("$!")
			addr=$(main_addr "$bin/main.log") || exit 1
			logs=()
			for w in $(seq "$k"); do
				"$bin/worker" --join "$addr" --listen 127.0.0.1:0 --threads "$threads" 2>"$bin/w$w.log" &
				pids+=("$!")
				logs+=("$bin/w$w.log")
			done
			wait "${pids[@]}"
			pids=()
			row "kron$s" "1 main + $k workers" "$bin/main.json" "${logs[@]}"
		done
	done
done
mv "$out.tmp" "$out"
echo "wrote $out" >&2
