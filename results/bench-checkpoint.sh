#!/usr/bin/env bash
# What does checkpointing cost? Runs main-node on kron13 and kron15 with no
# checkpoint, --checkpoint-every 5s and --checkpoint-every 1s, interleaved
# run by run, each under /tmp/sketchcc-bench.lock; checkpoints go to a
# fresh directory on the same disk as the stream (fsync included).
#
# Usage: results/bench-checkpoint.sh MAIN_NODE [RUNS]
#   RUNS  runs per cell (default 3)
# Writes the runs to results/checkpoint-DATE.tsv and the table to
# results/checkpoint-DATE.md (CPU, Go version and commit at the top).
# Env: KRON=dir of kron13.bin and kron15.bin (default /tmp/kron),
#      CKPT=parent of the checkpoint directories (default /tmp).
# One tab-separated line per run: stream, interval, run, components,
# updates/s, end-to-end seconds, checkpoints, seconds in checkpoints
# (barriers and writes), seconds writing, bytes per checkpoint, load average.
set -euo pipefail
bin=$1
runs=${2:-3}
kron=${KRON:-/tmp/kron}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
day=$(date -u +%F)
tsv=$here/checkpoint-$day.tsv
: >"$tsv"
dir=$(mktemp -d "${CKPT:-/tmp}/sketchcc-ckpt-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
for s in 13 15; do
	for r in $(seq "$runs"); do
		for every in none 5s 1s; do
			args=()
			[ "$every" != none ] && args=(--checkpoint-dir "$dir" --checkpoint-every "$every")
			res=$(flock /tmp/sketchcc-bench.lock "$bin" --stream "$kron/kron$s.bin" --json --progress never "${args[@]}" |
				python3 -c "import json,sys; d=json.load(sys.stdin); print(d['components'], d['updates_per_second'], d['end_to_end_seconds'], d.get('checkpoints', 0), d.get('checkpoint_seconds', 0), d.get('checkpoint_write_seconds', 0), d.get('checkpoint_bytes', 0), sep='\t')")
			rm -f "$dir"/checkpoint.skcc
			printf 'kron%s\t%s\t%s\t%s\t%s\n' "$s" "$every" "$r" "$res" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$tsv"
		done
	done
done
{
	echo "# Checkpoint cost, $day"
	echo
	echo "CPU: $(cpu_name), $(nproc) cores; $(go version | cut -d' ' -f3);"
	echo "main-node: $("$bin" --version 2>&1 | head -1). Runs interleaved (none, 5s, 1s per round), each under"
	echo "/tmp/sketchcc-bench.lock; the machine is shared, so the load average is given per run."
	echo
	python3 - "$tsv" <<'EOF'
import sys, statistics as st
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
cells = {}
for r in rows:
    s, every, run, comps, ups, e2e, n, cks, wsec, nbytes, load = r
    cells.setdefault((s, every), []).append(dict(run=int(run), comps=int(comps), ups=float(ups), e2e=float(e2e),
        n=int(n), cks=float(cks), wsec=float(wsec), bytes=int(nbytes), load=load))
print("| stream | checkpoint every | runs | components | updates/s (M), each run | median | vs none | checkpoints per run | s per checkpoint (barrier + write) | write s per GB | barrier + write s per GB | checkpoint MB | load average (1, 5, 15 min) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for s in sorted({k[0] for k in cells}):
    base = None
    for every in ["none", "5s", "1s"]:
        c = cells.get((s, every))
        if not c:
            continue
        med = st.median(x['ups'] for x in c)
        if every == "none":
            base = med
        ratio = f"{med / base:.0%}" if base else "–"
        n = [x['n'] for x in c]
        tot = sum(n)
        per = f"{sum(x['cks'] for x in c) / tot:.2f}" if tot else "–"
        gb = [x['bytes'] / 1e9 for x in c if x['n']]
        wpg = f"{sum(x['wsec'] for x in c) / sum(x['n'] * x['bytes'] / 1e9 for x in c):.2f}" if tot else "–"
        apg = f"{sum(x['cks'] for x in c) / sum(x['n'] * x['bytes'] / 1e9 for x in c):.2f}" if tot else "–"
        mb = f"{max(x['bytes'] for x in c) / 1e6:.1f}" if tot else "–"
        print(f"| {s} | {every} | {len(c)} | {', '.join(sorted({str(x['comps']) for x in c}))} | "
              f"{', '.join('%.2f' % (x['ups'] / 1e6) for x in c)} | {med / 1e6:.2f} | {ratio} | {', '.join(map(str, n))} | {per} | {wpg} | {apg} | {mb} | "
              f"{'; '.join(x['load'] for x in c)} |")
EOF
} >"$here/checkpoint-$day.md"
