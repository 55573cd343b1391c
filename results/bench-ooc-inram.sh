#!/usr/bin/env bash
# In RAM, before and after: runs two main-node binaries (OLD, NEW) on each
# stream with no memory limit, interleaved run by run, each under
# /tmp/sketchcc-bench.lock, and prints a Markdown table of the medians of
# updates/s end to end, final query seconds and Boruvka (cc) seconds.
#
# Usage: results/bench-ooc-inram.sh OLD NEW RUNS STREAM...
# Output on stdout; one line per run on stderr.
set -euo pipefail
old=$1 new=$2 runs=$3
shift 3
tsv=$(mktemp)
trap 'rm -f "$tsv"' EXIT
for s in "$@"; do
	for r in $(seq "$runs"); do
		for which in old new; do
			bin=$old
			[ "$which" = new ] && bin=$new
			line=$(flock /tmp/sketchcc-bench.lock "$bin" --stream "$s" --json --progress never | python3 -c "
import json,sys; d=json.load(sys.stdin); print(d['components'], d['updates_per_second'], d['query_seconds'], d['cc_seconds'], sep='\t')")
			printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$s" .bin)" "$which" "$r" "$line" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$tsv" >&2
		done
	done
done
python3 - "$tsv" <<'EOF'
import sys, statistics as st
cells = {}
for l in open(sys.argv[1]):
    s, which, run, comps, ups, q, cc, load = l.rstrip('\n').split('\t')
    cells.setdefault((s, which), []).append((comps, float(ups), float(q), float(cc)))
print("| stream | binary | runs | components | updates/s (M), each run | median | query s | cc s |")
print("|---|---|---|---|---|---|---|---|")
for (s, which), c in cells.items():
    print(f"| {s} | {which} | {len(c)} | {', '.join(sorted({x[0] for x in c}))} | {', '.join('%.2f' % (x[1]/1e6) for x in c)} | "
          f"{st.median(x[1] for x in c)/1e6:.2f} | {st.median(x[2] for x in c):.3f} | {st.median(x[3] for x in c):.3f} |")
EOF
