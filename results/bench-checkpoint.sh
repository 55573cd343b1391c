#!/usr/bin/env bash
# What does checkpointing cost? Runs main-node on kron13 and kron15 with no
# checkpoint, --checkpoint-every 5s and --checkpoint-every 1s, interleaved
# run by run, each under /tmp/sketchcc-bench.lock; checkpoints go to a
# fresh directory on the same disk as the stream (fsync included).
#
# Usage: results/bench-checkpoint.sh MAIN_NODE [RUNS]
#   RUNS  runs per cell (default 3)
# Env: KRON=dir of kron13.bin and kron15.bin (default /tmp/kron),
#      CKPT=parent of the checkpoint directories (default /tmp).
# Prints one tab-separated line per run: stream, interval, run, components,
# updates/s, end-to-end seconds, checkpoints, seconds in checkpoints
# (barriers and writes), seconds writing, bytes per checkpoint, load average.
set -euo pipefail
bin=$1
runs=${2:-3}
kron=${KRON:-/tmp/kron}
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
			printf 'kron%s\t%s\t%s\t%s\t%s\n' "$s" "$every" "$r" "$res" "$(cut -d' ' -f1-3 /proc/loadavg)"
		done
	done
done
