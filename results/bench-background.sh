#!/usr/bin/env bash
# Did the background query mode pay? Runs main-node on kron13 and kron15
# with 0, 20 and 100 mid-stream queries (--queries K+1), each query either
# in the background (ingestion goes on while the flush and Boruvka run) or
# synchronous, interleaved run by run, under /tmp/sketchcc-bench.lock.
#
# Usage: results/bench-background.sh MAIN_NODE [RUNS]
#   MAIN_NODE  a main-node built from 686854a (the last commit with the
#              background mode) with one line changed in
#              cmd/main-node/queries.go, so that SKETCHCC_SYNC=1 makes the
#              mid-stream queries synchronous:
#                if cl == nil && os.Getenv("SKETCHCC_SYNC") == "" {
#   RUNS       runs per cell (default 3)
# Env: KRON=dir of kron13.bin and kron15.bin (default /tmp/kron).
# Prints the CPU, then one tab-separated line per run: stream, queries, mode, run,
# components, updates/s, end-to-end seconds, load average.
set -euo pipefail
bin=$1
runs=${2:-3}
kron=${KRON:-/tmp/kron}
. "$(dirname "$0")/lib.sh"
echo "# CPU: $(cpu_name), $(nproc) cores; $(go version | cut -d' ' -f3)"
for s in 13 15; do
	for r in $(seq "$runs"); do
		for k in 0 20 100; do
			for mode in bg sync; do
				[ "$k" = 0 ] && [ "$mode" = sync ] && continue
				env=(); [ "$mode" = sync ] && env=(SKETCHCC_SYNC=1)
				res=$(flock /tmp/sketchcc-bench.lock env "${env[@]}" "$bin" --stream "$kron/kron$s.bin" \
					--json --progress never --queries $((k + 1)) | python3 -c \
					"import json,sys; d=json.load(sys.stdin); print(d['components'], d['updates_per_second'], d['end_to_end_seconds'])")
				printf 'kron%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$k" "$mode" "$r" "$res" "$(cut -d' ' -f1-3 /proc/loadavg)"
			done
		done
	done
done
