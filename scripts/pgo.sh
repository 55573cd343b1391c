#!/usr/bin/env bash
# Writes cmd/main-node/default.pgo, a CPU profile that `go build` then uses
# for profile-guided optimisation of main-node (-pgo=auto picks up
# default.pgo in the main package's directory). None is committed: on
# 2026-11-30 PGO measured no gain (results/perf-notes.md). Delete the file
# after measuring, or every later build of main-node uses it.
#
# The profile merges main-node runs on kron13 and kron15 at the default
# settings and at --batch-factor 0.5, so that the hot paths of both shapes
# (gutter inserts, delta workers, the final flush, Boruvka) are covered.
#
# Usage: scripts/pgo.sh
# Env:   DATA=dir of kronN.bin (default /tmp/sketchcc-data); missing streams
#        are generated as results/bench-ingest.sh does (kron15 and its edge
#        list take about 5.5 GB). About a minute on 2 cores.
# Compare before and after with results/bench-ingest.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
data=${DATA:-/tmp/sketchcc-data}
mkdir -p "$data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Build without the old profile, so the new one describes unoptimised code.
go build -pgo=off -o "$tmp/" ./cmd/main-node ./cmd/streamtool
profiles=()
for s in 13 15; do
	f=$(kron_stream "$tmp/streamtool" "$data" "$s")
	for bf in 1 0.5; do
		p=$tmp/kron$s-bf$bf.pprof
		"$tmp/main-node" --stream "$f" --json --progress never --batch-factor "$bf" --cpu-profile "$p" >/dev/null
		profiles+=("$p")
	done
done
go tool pprof -proto "${profiles[@]}" >cmd/main-node/default.pgo
echo "wrote cmd/main-node/default.pgo ($(wc -c <cmd/main-node/default.pgo) bytes) from ${#profiles[@]} runs" >&2
