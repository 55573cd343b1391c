#!/usr/bin/env bash
# Packed vs binary, whole process (issue 28, must-show 3): main-node
# --stream FILE --json with default flags on a binary stream and on its
# packed copy, interleaved run by run (packed first in odd rounds, binary
# first in even ones), each run under /tmp/sketchcc-bench.lock, both files
# read once before the first run (warm page cache).
#
# Usage: results/bench-packed.sh MAIN_NODE BINARY PACKED [ROUNDS] > OUT.tsv
#   ROUNDS  pairs of runs (default 5)
# Prints one tab-separated line per run: round, format, 1-minute load
# average after the run, wall s, user s, sys s, max RSS KiB (/usr/bin/time),
# then from --json: updates/s, ingest s, main CPU ns per update, of it the
# read stage's, components, peak RSS bytes.
set -euo pipefail
mn=$1
declare -A file=([bin]=$2 [pk]=$3)
rounds=${4:-5}
cat "${file[bin]}" "${file[pk]}" >/dev/null
t=$(mktemp -d /tmp/sketchcc-packed-bench.XXXXXX)
trap 'rm -rf "$t"' EXIT
printf 'round\tformat\tload1\twall_s\tuser_s\tsys_s\tmaxrss_kb\tjson_rate\tjson_ingest_s\tjson_ns_per_update\tread_ns\tcomponents\tpeak_rss\n'
for i in $(seq "$rounds"); do
	order="pk bin"
	if ((i % 2 == 0)); then order="bin pk"; fi
	for f in $order; do
		flock /tmp/sketchcc-bench.lock /usr/bin/time -f "%e %U %S %M" -o "$t/time" \
			"$mn" --stream "${file[$f]}" --json >"$t/out.json" 2>"$t/err"
		read -r wall user sys rss <"$t/time"
		load=$(cut -d' ' -f1 /proc/loadavg)
		json=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); c = d["main_cpu"]
print("%.0f\t%.3f\t%.1f\t%.2f\t%d\t%d" % (d["updates_per_second"], d["ingest_seconds"], c["total_ns_per_update"],
      c["stages_ns_per_update"]["read"], d["components"], d["peak_rss_bytes"]))' "$t/out.json")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$f" "$load" "$wall" "$user" "$sys" "$rss" "$json"
	done
done
