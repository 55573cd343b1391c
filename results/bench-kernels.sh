#!/usr/bin/env bash
# Times BenchmarkApplyBatch (V = 2^13, 2^15, 2^17) under every sketch kernel
# this CPU has, against a base commit's AVX-512 kernel and Go loop, and
# writes a dated Markdown report with benchstat tables to
# results/kernels-<date>.md.
#
# Usage: results/bench-kernels.sh [BASE_COMMIT]
#   BASE_COMMIT  default 686854a (the AVX-512 kernel with splitmix64 column
#                hashes). Its tree is exported with git archive, and given
#                the working tree's sketch/bench_test.go and
#                internal/cputime, so both sides run the same benchmark
#                (index-updates/cpu-s needs them). The working tree's
#                benchmark file no longer compiles against 686854a (Params
#                became immutable and Sample changed after it): give a
#                base from after that change, or adapt the copied file.
# Env:   COUNT=6 interleaved rounds (benchstat wants >= 6); each round runs
#        every configuration once, under flock /tmp/sketchcc-bench.lock.
#        BENCHTIME= go test -benchtime (default 1s)
#        OUT= report path (default results/kernels-<date>.md)
# Configurations: base/avx512 (the base's kernel), base/portable (the
# base built with -tags purego), then new/K for every K in
# sketch.Kernels() on this CPU (SKETCHCC_SKETCH_KERNEL=K).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-686854a}
count=${COUNT:-6}
benchtime=${BENCHTIME:-1s}
out=${OUT:-results/kernels-$(date -u +%F).md}
benchstat=${BENCHSTAT:-$HOME/go/bin/benchstat}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/base"
git archive "$base" | tar -x -C "$tmp/base"
cp sketch/bench_test.go "$tmp/base/sketch/"
mkdir -p "$tmp/base/internal/cputime"
cp internal/cputime/*.go "$tmp/base/internal/cputime/"
(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./sketch && go test -c -tags purego -o "$tmp/base-purego.test" ./sketch)
go test -c -o "$tmp/new.test" ./sketch

# The kernels this CPU has, as the new build lists them.
kernels=$(go run ./cmd/main-node --help 2>/dev/null | sed -n 's/.*available here: \([a-z0-9, ]*\)).*/\1/p' | tr -d ,)
[ -n "$kernels" ] || { echo "could not list the kernels from main-node --help" >&2; exit 1; }

run() { # run NAME ENV_KERNEL BINARY
	local name=$1 k=$2 bin=$3
	SKETCHCC_SKETCH_KERNEL=$k flock /tmp/sketchcc-bench.lock "$bin" -test.run='^$' \
		-test.bench='^BenchmarkApplyBatch$' -test.benchtime="$benchtime" -test.count=1 >>"$tmp/$name.txt"
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$count"); do
	echo "round $round of $count" >&2
	run base-avx512 "" "$tmp/base.test"
	run base-portable "" "$tmp/base-purego.test"
	for k in $kernels; do run "new-$k" "$k" "$tmp/new.test"; done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

stat() { "$benchstat" -ignore sketch-kernel "$@"; }
{
	echo "# BenchmarkApplyBatch per sketch kernel, $(date -u '+%F %H:%M UTC')"
	echo
	echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p'), family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p'); $(nproc) cores; flags avx512f/dq/cd/vl: $(for f in avx512f avx512dq avx512cd avx512vl; do grep -qw $f /proc/cpuinfo && printf y || printf n; done), avx2: $(grep -qw avx2 /proc/cpuinfo && echo y || echo n)"
	echo "- $(go version); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- sketch || echo ' (sketch/ dirty)'), base $base"
	echo "- $count interleaved rounds, benchtime $benchtime, each run under flock /tmp/sketchcc-bench.lock;"
	echo "  the machine is shared: load average $load0 at the start, $load1 at the end."
	echo "  index-updates/cpu-s divides by the benchmark thread's CPU time, so waiting for a core does not count;"
	echo "  index-updates/s is wall time. Kernels on this CPU: $kernels."
	echo
	echo "## AVX-512: the base's kernel vs this tree's"
	echo '```'
	stat base="$tmp/base-avx512.txt" new="$tmp/new-avx512.txt" 2>&1 || true
	echo '```'
	echo
	echo "## What a CPU without AVX-512 runs: the base's Go loop vs this tree's AVX2 kernel"
	echo '```'
	stat base-portable="$tmp/base-portable.txt" new-avx2="$tmp/new-avx2.txt" 2>&1 || true
	echo '```'
	echo
	echo "## The portable Go loop: base vs new"
	echo '```'
	stat base="$tmp/base-portable.txt" new="$tmp/new-portable.txt" 2>&1 || true
	echo '```'
	echo
	echo "## Raw results"
	for f in "$tmp"/*.txt; do
		echo
		echo "### $(basename "$f" .txt)"
		echo '```'
		grep -E '^Benchmark' "$f"
		echo '```'
	done
} >"$out"
echo "wrote $out" >&2
