#!/usr/bin/env bash
# Measures --k-connectivity K = 1..4: ingestion rate, peak RSS and the
# final query's split (flush, F1 by the CC query, F2..FK extraction, restore,
# min cut on the certificate) on Kronecker streams, runs interleaved
# (round r runs every scale and K once, in turn), and writes a dated
# Markdown table of medians to results/.
#
# Usage: results/bench-kconn.sh [SCALE ...]     (default: 13 15)
# Env:   DATA=dir for generated streams (default /tmp/sketchcc-data)
#        RUNS=rounds (default 3); KS="1 2 3 4"
# Each run holds /tmp/sketchcc-bench.lock (the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
scales=("${@:-13}")
[ $# -eq 0 ] && scales=(13 15)
data=${DATA:-/tmp/sketchcc-data}
runs=${RUNS:-3}
read -r -a ks <<<"${KS:-1 2 3 4}"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/streamtool
streams=()
for s in "${scales[@]}"; do streams+=("$(kron_stream "$bin/streamtool" "$data" "$s")"); done

for r in $(seq "$runs"); do
	for i in "${!scales[@]}"; do
		for k in "${ks[@]}"; do
			echo "round $r: kron${scales[$i]} K=$k" >&2
			flock /tmp/sketchcc-bench.lock "$bin/main-node" --stream "${streams[$i]}" --json --k-connectivity "$k" \
				>"$bin/kron${scales[$i]}-k$k-$r.json"
		done
	done
done

out=$(dated_table kconn)
{
	echo "# k-edge-connectivity cost: main-node --k-connectivity K on Kronecker streams, $(date -u +%Y-%m-%d)"
	echo
	echo "- machine: $(cpu_name), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM, shared with other engineers' runs (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "- $(go version); commit $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain -- '*.go' '*.s' go.mod go.sum)" ] || echo ' (dirty)')"
	echo "- command: \`main-node --stream kronN.bin --json --k-connectivity K\` (all cores, defaults otherwise); $runs interleaved rounds; medians"
	echo "- K sets are one sketch of K·S columns (sketch.Params.WithSets): one index hash and one sketch write per update, K·S column hashes"
	echo "- query split, final query: flush; F1 = the CC query (Boruvka or the greedy DSU); F2..FK = Boruvka over each later set after deleting the earlier forests; restore = XORing those forests back; cut = kconn on the certificate (components, Tarjan bridges, Stoer–Wagner with Nagamochi–Ibaraki contraction)"
	echo
	python3 - "$bin" "${scales[@]}" -- "${ks[@]}" <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]
i = sys.argv.index("--")
scales, ks = sys.argv[2:i], sys.argv[i+1:]
print("| stream | K | updates/s end to end | vs K=1 | insertion updates/s | peak RSS | sketch bytes | flush s | F1 (CC) s | F2..FK s | restore s | cut s | min(K,λ) | bridges | certificate edges |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for s in scales:
    base = None
    for k in ks:
        js = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, f"kron{s}-k{k}-*.json")))]
        med = lambda f: statistics.median(f(j) for j in js)
        ups = med(lambda j: j["updates_per_second"])
        base = base or ups
        kr = lambda j, f: j["k_connectivity"][-1][f] if j.get("k_connectivity") else 0
        last = js[0].get("k_connectivity", [{}])[-1] if js[0].get("k_connectivity") else {}
        print(f"| kron{s} | {k} | **{ups/1e6:.2f} M** | {ups/base:.0%} | {med(lambda j: j['insert_updates_per_second'])/1e6:.2f} M | "
              f"{med(lambda j: j['peak_rss_bytes'])/2**20:,.0f} MiB | {js[0]['sketch_bytes']:,} | {med(lambda j: j['flush_seconds'] + kr(j, 'flush_seconds')):.3f} | "
              f"{med(lambda j: j['cc_seconds']):.3f} | {med(lambda j: kr(j, 'extract_seconds')):.3f} | {med(lambda j: kr(j, 'restore_seconds')):.3f} | "
              f"{med(lambda j: kr(j, 'cut_seconds')):.3f} | {last.get('edge_connectivity', '–')} | {last.get('bridges', '–')} | {last.get('certificate_edges', '–')} |")
print()
print("Runs (updates/s end to end, M):")
print()
for s in scales:
    for k in ks:
        rates = [json.load(open(p))["updates_per_second"]/1e6 for p in sorted(glob.glob(os.path.join(d, f"kron{s}-k{k}-*.json")))]
        print(f"- kron{s} K={k}: " + ", ".join(f"{x:.2f}" for x in rates))
PY
} >"$out"
echo "wrote $out" >&2
