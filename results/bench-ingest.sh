#!/usr/bin/env bash
# Measures ingestion: runs main-node --json on Kronecker streams and writes a
# dated Markdown table to results/ingest-<date>.md: updates/s end to end and
# for insertion alone, final flush, Boruvka and query seconds, sketch bytes
# and peak RSS, one row per run and a median row per stream.
#
# Usage: results/bench-ingest.sh [SCALE ...]     (default: 13 15)
# Env:   DATA=dir for generated streams (default /tmp/sketchcc-data)
#        RUNS=runs per stream and batch factor (default 3)
#        BATCH_FACTORS=space-separated --batch-factor values (default "1 0.5":
#          main-node's default and the setting tuned for 2 cores; see
#          results/perf-notes.md)
#        OUT=output file, relative to the repository root (default
#          results/ingest-kron<scales>-<date>.md, e.g. ingest-kron13-15-<date>.md;
#          a rerun on the same day replaces the table)
# Streams are generated with `streamtool gen kron --scale N --seed 1` when
# missing (scale >= 16 without the final edge list). Needs go and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
scales=("${@:-13}")
[ $# -eq 0 ] && scales=(13 15)
data=${DATA:-/tmp/sketchcc-data}
runs=${RUNS:-3}
read -r -a factors <<<"${BATCH_FACTORS:-1 0.5}"
mkdir -p "$data"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" ./cmd/main-node ./cmd/streamtool

# row.py STREAM LABEL RUN.json...: one table row, of one run or (LABEL
# "median") the median of several in each column.
cat >"$bin/row.py" <<'PY'
import json, statistics, sys
stream, factor, label, *paths = sys.argv[1:]
js = [json.load(open(p)) for p in paths]
j = {k: statistics.median(r[k] for r in js) for k in (
    "updates", "components", "updates_per_second", "insert_updates_per_second", "flush_seconds",
    "cc_seconds", "query_seconds", "sketch_bytes", "sketch_bytes_per_vertex", "peak_rss_bytes")}
b = "**" if label == "median" else ""
print(f"| {stream} | {factor} | {j['updates']:,.0f} | {j['components']:.0f} | {label} | "
      f"{b}{j['updates_per_second']/1e6:.2f} M{b} | {b}{j['insert_updates_per_second']/1e6:.2f} M{b} | "
      f"{j['flush_seconds']:.3f} | {j['cc_seconds']:.3f} | {j['query_seconds']:.3f} | "
      f"{j['sketch_bytes']:,.0f} | {j['sketch_bytes_per_vertex']:,.0f} | "
      f"{j['peak_rss_bytes']/2**20:.0f} MiB | {j['peak_rss_bytes']/j['sketch_bytes']:.2f}× |")
PY

date=$(date -u +%Y-%m-%d)
out=${OUT:-results/ingest-kron$(IFS=-; echo "${scales[*]}")-$date.md}
cpu=$(cpu_name)
{
	echo "# Ingestion: main-node on Kronecker streams, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM"
	echo "- $(go version)"
	echo "- load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- commit: $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain -- '*.go' '*.s' go.mod go.sum)" ] || echo ' (dirty)')"
	echo "- command: \`main-node --stream kronN.bin --json --batch-factor F\` (otherwise defaults: all cores, sketch factor 1); runs per stream and factor: $runs"
	echo "- end to end = from opening the stream to sketches that answer a query (insertion + final flush)"
	echo "- median rows: the median of the runs in each column; script: \`BATCH_FACTORS=\"${factors[*]}\" results/bench-ingest.sh ${scales[*]}\`"
	echo
	echo "| stream | batch factor | updates | components | run | end-to-end updates/s | insertion updates/s | final flush s | Boruvka s | query s | sketch bytes | bytes/vertex | peak RSS | RSS / sketch |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$out.tmp"
for s in "${scales[@]}"; do
	f=$(kron_stream "$bin/streamtool" "$data" "$s")
	for bf in "${factors[@]}"; do
		for r in $(seq 1 "$runs"); do
			"$bin/main-node" --stream "$f" --json --progress never --batch-factor "$bf" >"$bin/kron$s-bf$bf-run$r.json"
			python3 "$bin/row.py" "kron$s" "$bf" "$r" "$bin/kron$s-bf$bf-run$r.json" >>"$out.tmp"
			tail -1 "$out.tmp" >&2
		done
		if [ "$runs" -gt 1 ]; then
			python3 "$bin/row.py" "kron$s" "$bf" "median" "$bin/kron$s-bf$bf-run"*.json >>"$out.tmp"
			tail -1 "$out.tmp" >&2
		fi
	done
done
mv "$out.tmp" "$out"
echo "wrote $out" >&2
