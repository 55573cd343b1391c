#!/usr/bin/env bash
# Measures main-node as a service (issue 26): a Kronecker stream piped
# through standard input (`cat kronN.bin | main-node --stream -`), with
#   none        no client (the baseline of the same input path),
#   comp10      a client asking components 10 times a second,
#   points      8 clients asking 1,000 random connected pairs a request,
#               back to back (streamtool query --random-pairs 1000
#               --parallel 8 --repeat 0),
#   pointsgap   the same with GAP_CLIENTS clients (default 32) and main-node --query-gap GAP
#               (default 20ms): at most one query per GAP, shared by the
#               questions that arrive meanwhile (only when SETUPS names it),
#   pointsbin   points in the API's binary encoding (streamtool query --binary),
#   pointsbingap  pointsgap in the binary encoding (both only when SETUPS names them),
# each run under flock, the setups interleaved in every round. It
# writes a dated Markdown table (results/live-<date>.md): ingestion rate
# (updates / time from the start of ingestion to the end of the final
# query), its ratio to the round's baseline, and for the clients their
# requests, latency p50/p99 and pairs per second. Every final answer is
# checked against the generator's component count.
#
# Usage: results/bench-live.sh [SCALE]     (default: 15)
# Env:   DATA=dir of streams (default /tmp/sketchcc-data); ROUNDS=3;
#        SETUPS="none comp10 points" (the first must be none; pointsgap, pointsbin,
#        pointsbingap may be added); GAP=20ms; GAP_CLIENTS=32;
#        OUT=file; LOCK=file (default /tmp/sketchcc-bench.lock)
# Needs go and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
scale=${1:-15}
data=${DATA:-/tmp/sketchcc-data}
rounds=${ROUNDS:-3}
setups=(${SETUPS:-none comp10 points})
gap=${GAP:-20ms}
gap_clients=${GAP_CLIENTS:-32}
lock=${LOCK:-/tmp/sketchcc-bench.lock}
out=${OUT:-$(dated_table live)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/" ./cmd/main-node ./cmd/streamtool
f=$(kron_stream "$tmp/streamtool" "$data" "$scale")
gen=$f.gen.json
[ -f "$gen" ] || gen=${f%.bin}.gen.json # streamtool gen's JSON, saved under either name
want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['components'])" "$gen")
port=$((20000 + RANDOM % 20000))

# run SETUP ROUND: one timed run; appends a TSV row to $tmp/rows.
run() {
	local setup=$1 round=$2 client=() node=()
	case $setup in
	comp10) client=(components --repeat 0 --interval 100ms) ;;
	points) client=(connected --random-pairs 1000 --repeat 0 --parallel 8) ;;
	pointsgap)
		client=(connected --random-pairs 1000 --repeat 0 --parallel "$gap_clients")
		node=(--query-gap "$gap")
		;;
	pointsbin) client=(connected --binary --random-pairs 1000 --repeat 0 --parallel 8) ;;
	pointsbingap)
		client=(connected --binary --random-pairs 1000 --repeat 0 --parallel "$gap_clients")
		node=(--query-gap "$gap")
		;;
	esac
	flock "$lock" bash -c '
		cat "$1" | "$2/main-node" --stream - --query-listen 127.0.0.1:$3 --json $4 >"$2/run.json" 2>"$2/run.err" &
		pid=$!
		shift 4
		if [ $# -gt 0 ]; then
			for _ in $(seq 200); do grep -q "query API on" "'"$tmp"'/run.err" && break; sleep 0.05; done
			"'"$tmp"'/streamtool" query 127.0.0.1:'"$port"' "$@" >"'"$tmp"'/client.json" || true
		else
			echo "{}" >"'"$tmp"'/client.json"
		fi
		wait $pid' _ "$f" "$tmp" "$port" "${node[*]}" "${client[@]}"
	python3 - "$tmp/run.json" "$tmp/client.json" "$setup" "$round" "$want" >>"$tmp/rows" <<'PY'
import json, sys
r, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if r["components"] != int(sys.argv[5]):
    sys.exit(f"{sys.argv[3]}: {r['components']} components, generator says {sys.argv[5]}")
print("\t".join(str(x) for x in [sys.argv[3], sys.argv[4], r["updates"], r["updates_per_second"],
      c.get("requests", 0) - c.get("errors", 0), c.get("latency_p50_ms", 0), c.get("latency_p99_ms", 0),
      c.get("pairs_per_second", 0)]))
PY
}

for round in $(seq "$rounds"); do
	for setup in "${setups[@]}"; do
		run "$setup" "$round"
		tail -1 "$tmp/rows" >&2
	done
done

python3 - "$tmp/rows" "$out" "$scale" "$(cpu_name)" "$(go version | cut -d' ' -f3)" "$(git rev-parse --short HEAD)" "$rounds" <<'PY'
import statistics, sys, datetime
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
base = {r[1]: float(r[3]) for r in rows if r[0] == "none"}
lines = [f"# kron{sys.argv[3]} as a live service: standard input, query API ({datetime.date.today()})", "",
    f"CPU: {sys.argv[4]}, 2 cores shared with other engineers' work; Go {sys.argv[5]}; commit {sys.argv[6]}.",
    f"`cat kron{sys.argv[3]}.bin | main-node --stream - --query-listen 127.0.0.1:PORT`, {sys.argv[7]} rounds of the setups",
    "interleaved, each run under flock. Rate: updates over the time from the start of ingestion to the end of the",
    "final query. Kept: the rate over the same round's no-client rate. Every final answer checked against the",
    "generator's component count. Clients: `streamtool query` on the same 2 cores (its CPU is taken from ingestion).", "",
    "| setup | round | rate (M updates/s) | kept | answered requests | p50 ms | p99 ms | pairs/s |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |"]
for r in rows:
    lines.append(f"| {r[0]} | {r[1]} | {float(r[3])/1e6:.2f} | {float(r[3])/base[r[1]]:.0%} | {r[4]} | {float(r[5]):.1f} | {float(r[6]):.1f} | {float(r[7])/1e6:.3f} M |")
lines += ["", "Medians over the rounds:", "", "| setup | rate (M/s) | kept | p50 ms | p99 ms | pairs/s |", "| --- | --- | --- | --- | --- | --- |"]
for s in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == s]
    med = lambda i: statistics.median(float(r[i]) for r in rs)
    kept = statistics.median(float(r[3]) / base[r[1]] for r in rs)
    lines.append(f"| {s} | {med(3)/1e6:.2f} | {kept:.0%} | {med(5):.1f} | {med(6):.1f} | {med(7)/1e6:.3f} M |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print(sys.argv[2])
PY
