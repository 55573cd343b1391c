#!/usr/bin/env bash
# Parallel ingestion on the main node, measured: 1 main node + 2 workers
# on loopback on Kronecker streams with several reader counts, and writes
# a dated Markdown table to results/parallel-cluster-<date>.md: updates/s,
# components (checked against the generator's .gen.json), the main
# process's CPU per stream update (total, by stage, busiest goroutine, from
# main-node --json's main_cpu), the workers' CPU per stream update
# (getrusage of each worker process), wire bytes per update out and back,
# and main and worker peak RSS, with Landscape's published figures beside.
#
# Usage: results/bench-parallel.sh STREAM.bin [STREAM.bin ...]
# Env:   READERS="1 2" reader counts; WORKERS=2; THREADS=1 delta goroutines
#        per worker; RUNS=1 runs of each setup (interleaved by reader count);
#        LOCK=/tmp/sketchcc-bench.lock taken around each run
# Each STREAM.bin needs STREAM.bin.gen.json, streamtool gen's summary:
#   streamtool gen kron --scale 15 --seed 1 -o STREAM.bin > STREAM.bin.gen.json
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
[ $# -ge 1 ] || { sed -n 2,17p "$0" >&2; exit 2; }
for f in "$@"; do
	[ -f "$f.gen.json" ] || { echo "bench-parallel: $f.gen.json is missing: write it with" \
		"'streamtool gen kron --scale N --seed S -o $f > $f.gen.json'" >&2; exit 2; }
done
readers=(${READERS:-1 2})
k=${WORKERS:-2}
threads=${THREADS:-1}
runs=${RUNS:-1}
lock=${LOCK:-/tmp/sketchcc-bench.lock}
bin=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$bin"; }
trap cleanup EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/worker
# A cluster key keeps other clusters gossiping on loopback out of this one.
head -c 32 /dev/urandom | base64 >"$bin/key"
chmod 600 "$bin/key"

date=$(date -u +%Y-%m-%d)
out=$(dated_table parallel-cluster)
cpu=$(cpu_name)
{
	echo "# Parallel ingestion: 1 main node + $k workers on loopback, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM; main node and workers share it,"
	echo "  and other processes may too (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "- $(go version)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')"
	echo "- \`main-node --stream S --readers R --listen 127.0.0.1:0 --expect-workers $k --local-workers 0 --json\`,"
	echo "  $k × \`worker --join ADDR --listen 127.0.0.1:0 --threads $threads\`"
	echo "- main CPU: ns of main-process CPU per stream update (getrusage), split by pprof labels (main_cpu in --json;"
	echo "  other: samples without a stage label, unsampled: getrusage minus the profile's samples);"
	echo "  busiest: the goroutine with the most CPU per update; worker CPU: ns per stream update, summed over the workers"
	echo "  (getrusage of each process); B/update: data-plane bytes per stream update, out (batches) / back (deltas)"
	echo "- Landscape (C++, MPI; issue 10): 3.1–4.2 M updates/s on kron15 with 1 main + 2 workers on a 2-core machine,"
	echo "  2.4–2.7 GB main-node RSS"
	echo
	echo "| stream | readers (main node's cores) | components (exact) | updates/s | main CPU ns/upd | read / insert / ship / merge / other / unsampled | busiest goroutine ns/upd | worker CPU ns/upd | B/upd out / back | main RSS | worker RSS (max) |"
	echo "|---|---:|---|---:|---:|---|---|---:|---|---:|---:|"
} >"$out.tmp"

row() { # stream readers main.json updates exact worker-logs-and-times...
	python3 - "$@" >>"$out.tmp" <<'PY'
import json, re, sys
stream, readers, path, exact, *files = sys.argv[1:]
j = json.load(open(path))
logs = [f for f in files if f.endswith(".log")]
times = [f for f in files if f.endswith(".time")]
rss = [int(m.group(1)) for l in logs for m in re.finditer(r"peak_rss_bytes=(\d+)", open(l).read())]
wcpu = sum(float(open(t).read().split()[0]) + float(open(t).read().split()[1]) for t in times)
u = j["updates"]
m = j.get("main_cpu") or {}
st = m.get("stages_ns_per_update", {})
stages = " / ".join(f"{st.get(s, 0):.1f}" for s in ("read", "insert", "ship", "merge", "other", "unsampled"))
out = j.get("network_bytes_per_update_out")
back = j.get("network_bytes_per_update_back")
wire = f"{out:.2f} / {back:.2f}" if out is not None else f"{j.get('network_bytes_per_update', 0):.2f} (both)"
ok = "yes" if j["components"] == int(exact) else f"NO (want {exact})"
cores = f" on {j['main_cores']} core{'s' if j['main_cores'] != 1 else ''}" if "main_cores" in j else ""
print(f"| {stream} | {readers}{cores} | {j['components']} ({ok}) | {j['updates_per_second']/1e6:.2f} M | "
      f"{m.get('total_ns_per_update', 0):.1f} | {stages} | {m.get('busiest_goroutine', '?')} {m.get('busiest_goroutine_ns_per_update', 0):.1f} | "
      f"{wcpu*1e9/u:.1f} | {wire} | {j['peak_rss_bytes']/2**20:.0f} MiB | {(max(rss)/2**20 if rss else 0):.0f} MiB |")
PY
	tail -1 "$out.tmp" >&2
}

cluster() { # stream readers
	local f=$1 r=$2
	"$bin/main-node" --stream "$f" --readers "$r" --listen 127.0.0.1:0 --expect-workers "$k" --local-workers 0 \
		--cluster-key-file "$bin/key" --json --progress never --log-level info >"$bin/main.json" 2>"$bin/main.log" &
	pids=("$!")
	local addr
	addr=$(main_addr "$bin/main.log") || exit 1
	for w in $(seq "$k"); do
		/usr/bin/time -f "%U %S" -o "$bin/w$w.time" \
			"$bin/worker" --join "$addr" --listen 127.0.0.1:0 --threads "$threads" --cluster-key-file "$bin/key" 2>"$bin/w$w.log" &
		pids+=("$!")
	done
	wait "${pids[@]}" || true
	pids=()
	[ -s "$bin/main.json" ] || { echo "main-node failed:" >&2; tail -20 "$bin/main.log" "$bin"/w*.log >&2; exit 1; }
}

for f in "$@"; do
	exact=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["components"])' "$f.gen.json")
	name=$(basename "$f" .bin)
	for _ in $(seq "$runs"); do
		for r in "${readers[@]}"; do
			flock "$lock" bash -c "$(declare -f cluster main_addr); bin=$bin k=$k threads=$threads; cluster $f $r"
			files=()
			for w in $(seq "$k"); do files+=("$bin/w$w.log" "$bin/w$w.time"); done
			row "$name" "$r" "$bin/main.json" "$exact" "${files[@]}"
		done
	done
done
mv "$out.tmp" "$out"
echo "wrote $out" >&2
