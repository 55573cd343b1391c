#!/usr/bin/env bash
# Compares the micro-benchmarks of the ingestion hot path between a base
# commit and the working tree (or a second commit) with benchstat, and
# writes a dated Markdown report to results/micro-<date>.md.
#
#   sketch   BenchmarkHash          one seeded 64-bit hash (splitmix64)
#            BenchmarkUpdate        one edge index into one sketch, V = 2^17
#            BenchmarkApplyBatch    one full batch into one sketch (the delta
#                                   workers' loop), V = 2^13, 2^15, 2^17
#   gutters  BenchmarkInsert        one edge into the gutters, V = 1e4, 1e6
#            BenchmarkInsertBatch   a 12 Ki-update chunk into main-node-sized
#                                   gutters (the reader's loop), V = 2^13..2^17
#   stream   BenchmarkReader        decoding 2^20 binary records (memory, file)
#
# Usage: results/bench-micro.sh [BASE_COMMIT [NEW_COMMIT]]
#   BASE_COMMIT  default 13424b8, the first commit that has the sketch,
#                gutters and stream benchmarks (only InsertBatch is copied
#                in). Its sketch and gutters hot paths are the first
#                pipeline's (473a53d): since then only the encodings, the
#                weakhash build tag and a Config.Validate bound were added;
#                its stream reader has the fixes ae33886..f87b104 (errors
#                and the end of the stream; the decode loop is the same).
#                Pass 473a53d to measure the first pipeline itself (every
#                benchmark then comes from the copies below).
#   NEW_COMMIT   default: the working tree as it is, uncommitted changes
#                included (the report lists them as "dirty")
# Env:   COUNT=6 runs of each benchmark per side (benchstat wants >= 6)
#        BENCHTIME= go test -benchtime (default: go's, 1s)
#        BENCH= go test -bench regex (default: the benchmarks above)
#        OUT= report path (default results/micro-<date>.md)
# COUNT=6 at the default benchtime is 12 benchmarks x 6 x 2 sides of about
# 1.5 s each with their setup: some 4-5 minutes; nothing else should run.
# COUNT=1 or a small BENCHTIME is a smoke test only: the first run of a
# benchmark pays for page faults and cold caches, and one sample cannot
# tell a change from noise.
#
# A commit is checked out with `git worktree add --detach` in a temporary
# directory, removed on exit. When a checked-out commit lacks one of the
# benchmarks, the copy of it in results/bench-micro/<pkg>_*_bench_test.go.txt
# is added to that worktree (as <pkg>/zz_benchmicro_*_test.go) so that
# benchstat can pair the names: the copies have the repository's bodies and
# compile against the API since 473a53d. The working tree is never modified.
# Needs go and git; installs benchstat with `go install` if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
root=$(pwd)

base_arg=${1:-13424b8}
new=${2:-}
count=${COUNT:-6}
benchtime=${BENCHTIME:-}
bench=${BENCH:-'^Benchmark(Hash|Update|ApplyBatch|Insert|InsertBatch|Reader)$'}
pkgs=(./sketch ./gutters ./stream)
date=$(date -u +%Y-%m-%d)
out=${OUT:-results/micro-$date.md}

base=$(git rev-parse --verify --quiet "$base_arg^{commit}") || { echo "bench-micro: no commit $base_arg" >&2; exit 2; }
if [ -n "$new" ]; then
	new=$(git rev-parse --verify --quiet "$new^{commit}") || { echo "bench-micro: no commit $2" >&2; exit 2; }
fi

benchstat=$(command -v benchstat || true)
if [ -z "$benchstat" ]; then
	benchstat=$(go env GOPATH)/bin/benchstat
	if [ ! -x "$benchstat" ]; then
		echo "installing benchstat" >&2
		go install golang.org/x/perf/cmd/benchstat@latest
	fi
fi

tmp=$(mktemp -d)
cleanup() {
	for w in "$tmp/base" "$tmp/new"; do
		[ -e "$w" ] && { git -C "$root" worktree remove --force "$w" || true; }
	done
	git -C "$root" worktree prune
	rm -rf "$tmp"
}
trap cleanup EXIT

# checkout COMMIT DIR: a detached worktree of COMMIT in DIR, with the
# compatibility copies of the benchmarks it lacks. Prints what it added.
checkout() {
	git worktree add --quiet --detach "$2" "$1" >&2 || return 1
	local f pkg fn stem added=()
	for f in results/bench-micro/*_bench_test.go.txt; do
		stem=$(basename "$f" _bench_test.go.txt) # e.g. sketch_hash
		pkg=${stem%%_*}
		fn=$(sed -n 's/^func \(Benchmark[A-Za-z0-9_]*\)(.*/\1/p' "$f")
		if ! grep -qs "^func $fn(" "$2/$pkg"/*_test.go; then
			cp "$f" "$2/$pkg/zz_benchmicro_${stem#*_}_test.go" || return 1
			added+=("$pkg.$fn")
		fi
	done
	echo "${added[*]}"
}

# missing DIR: the benchmarks of results/bench-micro that DIR lacks.
missing() {
	local f pkg fn miss=()
	for f in results/bench-micro/*_bench_test.go.txt; do
		pkg=$(basename "$f" | cut -d_ -f1)
		fn=$(sed -n 's/^func \(Benchmark[A-Za-z0-9_]*\)(.*/\1/p' "$f")
		grep -qs "^func $fn(" "$1/$pkg"/*_test.go || miss+=("$pkg.$fn")
	done
	echo "${miss[*]}"
}

describe() { # short hash and subject, the subject cut at 100 characters
	git log -1 --format='%h %s' "$1" | sed -E 's/^(.{100}).+$/\1…/'
}

cmd=(go test -run='^$' -bench="$bench" -count="$count")
[ -n "$benchtime" ] && cmd+=(-benchtime="$benchtime")
cmd+=("${pkgs[@]}")
cmdline="go test -run='^\$' -bench='$bench' -count=$count${benchtime:+ -benchtime=$benchtime} ${pkgs[*]}"

base_added=$(checkout "$base" "$tmp/base")
base_desc="$(describe "$base")"
[ -n "$base_added" ] && base_desc+=" (compatibility copies added: $base_added)"
if [ -n "$new" ]; then
	new_dir=$tmp/new
	new_added=$(checkout "$new" "$new_dir")
	new_desc="$(describe "$new")"
	[ -n "$new_added" ] && new_desc+=" (compatibility copies added: $new_added)"
else
	new_dir=$root
	new_desc="working tree at $(describe HEAD)"
	dirty=$(git status --porcelain --untracked-files=all -- sketch gutters stream dsu go.mod go.sum | cut -c4- | paste -sd' ')
	[ -n "$dirty" ] && new_desc+=" (dirty: $dirty)"
	m=$(missing "$new_dir")
	[ -n "$m" ] && echo "bench-micro: the working tree lacks $m; those rows will show only the base" >&2
fi

cpu=$(cpu_name)
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "base: $base_desc" >&2
(cd "$tmp/base" && "${cmd[@]}") | tee "$tmp/base.txt" >&2
echo "new: $new_desc" >&2
(cd "$new_dir" && "${cmd[@]}") | tee "$tmp/new.txt" >&2
(cd "$tmp" && "$benchstat" base=base.txt new=new.txt) >"$tmp/stat.txt"

{
	echo "# Micro-benchmarks of the ingestion hot path, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores (nproc), $(free -g | awk '/Mem:/{print $2}') GiB RAM; load average at the start: $load"
	echo "- $(go version)"
	echo "- base: $base_desc"
	echo "- new: $new_desc"
	echo "- command, run in the base tree, then in the new one: \`$cmdline\`"
	echo "- \`benchstat base=base.txt new=new.txt\` ($(go version -m "$benchstat" | awk '$1 == "mod" {print $2, $3; exit}'))"
	echo "- Hash: one seeded 64-bit hash; Update: one edge index into one sketch at V = 2^17; ApplyBatch: one full"
	echo "  batch (sketch bytes / 4 ids) into one sketch, index-updates/s = 2 × stream updates/s per core; Insert: one"
	echo "  edge into the gutters; InsertBatch: a 12 Ki-update chunk into main-node-sized gutters; Reader: 2^20 records"
	echo
	echo '```'
	cat "$tmp/stat.txt"
	echo '```'
	for side in base new; do
		echo
		echo "<details><summary>go test output, $side</summary>"
		echo
		echo '```'
		cat "$tmp/$side.txt"
		echo '```'
		echo
		echo "</details>"
	done
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2
