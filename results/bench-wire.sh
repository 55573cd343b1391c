#!/usr/bin/env bash
# Compares the data-plane wire of two commits: 1 main node (--local-workers 0)
# + 2 workers (--threads 1) on loopback, runs of the two builds interleaved,
# and writes a dated Markdown table to results/wire-<date>.md: components,
# updates/s, data-plane bytes per stream update out (batches) and back
# (deltas), worker and main-node CPU per stream update (getrusage through
# /usr/bin/time), and the codecs' and the worker's cost per update
# (BenchmarkWire, BenchmarkWireWorker).
#
# Usage: results/bench-wire.sh BEFORE_REV [SCALE ...]   (default scales: 13 15)
# Env:   DATA=dir of kronN.bin streams (default /tmp/sketchcc-data; generated
#        with `streamtool gen kron --scale N --seed 1` when missing);
#        RUNS=3 runs of each build; COUNT=6 runs of each micro-benchmark.
# Needs go, python3, /usr/bin/time and ~/go/bin/benchstat. Wrap it in
# `flock /tmp/sketchcc-bench.lock` on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
before_rev=${1:?usage: results/bench-wire.sh BEFORE_REV [SCALE ...]}
shift
scales=("${@:-13 15}")
scales=(${scales[@]})
data=${DATA:-/tmp/sketchcc-data}
runs=${RUNS:-3}
count=${COUNT:-6}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

mkdir -p "$tmp/src-before" "$tmp/before" "$tmp/after"
git archive "$before_rev" | tar -x -C "$tmp/src-before"
(cd "$tmp/src-before" && go build -o "$tmp/before/" ./cmd/main-node ./cmd/worker)
go build -o "$tmp/after/" ./cmd/main-node ./cmd/worker ./cmd/streamtool

# cluster BIN STREAM OUT: one run; writes OUT.main.json and OUT.{main,w1,w2}.time
# ("user sys maxrss" of each process).
cluster() {
	local bin=$1 f=$2 out=$3
	/usr/bin/time -f "%U %S %M" -o "$out.main.time" "$bin/main-node" --stream "$f" --listen 127.0.0.1:0 \
		--expect-workers 2 --local-workers 0 --json --progress never --log-level info \
		>"$out.main.json" 2>"$out.main.log" &
	pids=("$!")
	local addr
	addr=$(main_addr "$out.main.log") || exit 1
	for w in 1 2; do
		/usr/bin/time -f "%U %S %M" -o "$out.w$w.time" "$bin/worker" --join "$addr" \
			--listen 127.0.0.1:0 --threads 1 2>"$out.w$w.log" &
		pids+=("$!")
	done
	wait "${pids[@]}"
	pids=()
}

date=$(date -u +%Y-%m-%d)
out=$(dated_table wire)
cpu=$(cpu_name)
{
	echo "# the data-plane wire before and after, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM; main node and workers share it"
	echo "- $(go version)"
	echo "- before: $(git rev-parse --short "$before_rev"); after: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')"
	echo "- cluster: \`main-node --stream kronN.bin --listen 127.0.0.1:0 --expect-workers 2 --local-workers 0 --json\`"
	echo "  and 2 × \`worker --join ADDR --listen 127.0.0.1:0 --threads 1\`, loopback; runs of the two builds interleaved"
	echo "- bytes out / back: data-plane bytes sent to / received from the workers per stream update (frames and"
	echo "  handshakes); worker CPU: user + sys of both workers per stream update they handled (half the neighbour"
	echo "  ids they were sent); main CPU: user + sys of the main node per stream update"
	echo "- $runs runs of each build; other processes may share the machine (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))"
	echo
	echo "| stream | build | components (want) | updates/s | B/update out | B/update back | B/update total | worker CPU ns/update | main CPU ns/update |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$out.tmp"

row() { # stream build want prefix
	python3 - "$@" >>"$out.tmp" <<'PY'
import json, sys
stream, build, want, pre = sys.argv[1:]
j = json.load(open(pre + ".main.json"))
def cpu(p):
    u, s, _ = open(p).read().split()
    return float(u) + float(s)
wcpu = cpu(pre + ".w1.time") + cpu(pre + ".w2.time")
handled = sum(w["updates"] for w in j["workers"]) / 2
out = j.get("network_bytes_per_update_out")
back = j.get("network_bytes_per_update_back")
if out is None:  # builds before the split: sent and received per worker
    out = sum(w["bytes_sent"] for w in j["workers"]) / j["updates"]
    back = sum(w["bytes_received"] for w in j["workers"]) / j["updates"]
print(f"| {stream} | {build} | {j['components']} ({want}) | {j['updates_per_second']/1e6:.2f} M | {out:.2f} | "
      f"{back:.2f} | {j['network_bytes_per_update']:.2f} | {wcpu*1e9/handled:.1f} | "
      f"{cpu(pre + '.main.time')*1e9/j['updates']:.1f} |")
PY
	tail -1 "$out.tmp" >&2
}

for s in "${scales[@]}"; do
	f=$(kron_stream "$tmp/after/streamtool" "$data" "$s")
	want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["components"])' "$f.gen.json")
	for i in $(seq "$runs"); do
		for build in before after; do
			cluster "$tmp/$build" "$f" "$tmp/r"
			row "kron$s" "$build" "$want" "$tmp/r"
		done
	done
done

{
	echo
	echo "Codecs per stream update (two neighbour ids), BenchmarkWire: batches of the gutters' size (BytesPerVertex/4"
	echo "ids) with 2% of ids repeated, at the kron13 and kron15 geometries. codec=raw is the old wire (ids copied as"
	echo "uint32, deltas as every bucket), codec=compact this one; bytes/update is that direction's payload."
	echo "\`go test -run='^\$' -bench=Wire -count=$count ./distributor | benchstat -col /codec -\`:"
	echo
	echo '```'
	go test -run='^$' -bench='Wire$' -count="$count" ./distributor | ~/go/bin/benchstat -col /codec - 2>&1
	echo '```'
	echo
	echo "The worker's CPU per stream update for the same batches, BenchmarkWireWorker: decode a frame's batches,"
	echo "compute each delta, encode it (syscalls and the kernel's copies aside, which shrink with the bytes):"
	echo
	echo '```'
	go test -run='^$' -bench='WireWorker' -count="$count" ./distributor | ~/go/bin/benchstat -col /codec - 2>&1
	echo '```'
} >>"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2
