#!/usr/bin/env bash
# Runs main-node --json on Kronecker streams and writes a dated Markdown
# table of updates/s, query seconds, sketch bytes and peak RSS to
# results/main-node-<date>.md.
#
# Usage: results/bench-main-node.sh [SCALE ...]     (default: 13 15)
# Env:   DATA=dir for generated streams (default /tmp/sketchcc-data)
#        RUNS=runs per stream (default 3)
# Streams are generated with `streamtool gen kron --scale N --seed 1` when
# missing. Needs go and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
scales=("${@:-13}")
[ $# -eq 0 ] && scales=(13 15)
data=${DATA:-/tmp/sketchcc-data}
runs=${RUNS:-3}
mkdir -p "$data"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/streamtool

date=$(date -u +%Y-%m-%d)
out=results/main-node-$date.md
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
	echo "# main-node on Kronecker streams, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM"
	echo "- $(go version)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')"
	echo "- command: \`main-node --stream kronN.bin --json\` (defaults: all cores, sketch factor 1, batch factor 1), $runs runs each"
	echo "- end to end = from opening the stream to sketches that answer a query (insertion + final flush)"
	echo
	echo "| stream | updates | components | run | end-to-end updates/s | insertion updates/s | final flush s | Boruvka s | query s | sketch bytes | bytes/vertex | peak RSS | RSS / sketch |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$out.tmp"
for s in "${scales[@]}"; do
	f=$data/kron$s.bin
	if [ ! -f "$f" ]; then
		echo "generating $f" >&2
		big=(); [ "$s" -ge 16 ] && big=(--no-cum --pass-updates 1073741824) # no 50 GB edge list at scale 17
		"$bin/streamtool" gen kron --scale "$s" --seed 1 "${big[@]}" -o "$f" >"$f.gen.json"
	fi
	for r in $(seq 1 "$runs"); do
		"$bin/main-node" --stream "$f" --json --progress never >"$bin/run.json"
		python3 - "$bin/run.json" "kron$s" "$r" >>"$out.tmp" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {j['updates']:,} | {j['components']} | {sys.argv[3]} | "
      f"{j['updates_per_second']/1e6:.2f} M | {j['insert_updates_per_second']/1e6:.2f} M | "
      f"{j['flush_seconds']:.3f} | {j['cc_seconds']:.3f} | {j['query_seconds']:.3f} | "
      f"{j['sketch_bytes']:,} | {j['sketch_bytes_per_vertex']:,} | "
      f"{j['peak_rss_bytes']/2**20:.0f} MiB | {j['peak_rss_bytes']/j['sketch_bytes']:.2f}× |")
PY
		tail -1 "$out.tmp" >&2
	done
done
mv "$out.tmp" "$out"
echo "wrote $out" >&2
