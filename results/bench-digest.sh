#!/usr/bin/env bash
# What does hashing the stream prefix cost ingestion? Runs two main-node
# builds (before and after the prefix digest) on one stream, interleaved
# run by run (base, new, base, new, ...) in every cell, each run under
# /tmp/sketchcc-bench.lock: --readers 1 (the sequential path, Reader.Read
# hashes) and 2 (the parallel readers hash their blocks), each without
# checkpointing and with --checkpoint-dir (no checkpoint is due: the
# Cursor's digest is kept and Identify reads the stream's ends).
#
# Usage: results/bench-digest.sh BASE_MAIN_NODE NEW_MAIN_NODE STREAM [RUNS]
#   RUNS  runs per build and cell (default 5)
# Prints one tab-separated line per run, and writes them to
# results/resume-digest-DATE.tsv: build, readers, checkpoint dir (none or
# dir), run, components, updates/s, ingest s, end-to-end s, main CPU ns per
# update, of it the read stage's, load average (1, 5, 15 min).
set -euo pipefail
base=$1
new=$2
stream=$3
runs=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
tsv=$here/resume-digest-$(date -u +%F).tsv
: >"$tsv"
dir=$(mktemp -d /tmp/sketchcc-digest-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
for readers in 1 2; do
	for ck in none dir; do
		for r in $(seq "$runs"); do
			for build in base new; do
				bin=$base
				[ "$build" = new ] && bin=$new
				args=()
				[ "$ck" = dir ] && args=(--checkpoint-dir "$dir")
				res=$(flock /tmp/sketchcc-bench.lock "$bin" --stream "$stream" --readers "$readers" --json --progress never "${args[@]}" |
					python3 -c "import json,sys; d=json.load(sys.stdin); c=d['main_cpu']; print(d['components'], d['updates_per_second'], d['ingest_seconds'], d['end_to_end_seconds'], c['total_ns_per_update'], c['stages_ns_per_update']['read'], sep='\t')")
				printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$build" "$readers" "$ck" "$r" "$res" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$tsv"
			done
		done
	done
done
