#!/usr/bin/env bash
# Sketches bigger than memory: runs main-node on one stream under memory
# cgroup (v1) limits given as fractions of the stream's sketch bytes, the
# page cache counted, and writes a dated table. Needs root: it creates the
# cgroup /sys/fs/cgroup/memory/sketchcc-ooc-PID for each run, moves the run
# into it, and removes it afterwards (also on error or Ctrl-C).
#
# Usage: results/bench-ooc.sh MAIN_NODE STREAM [RUNS]
#   RUNS  runs per limit, interleaved round by round (default 3)
# Env: LIMITS  fractions of the sketch bytes, "none" for no limit
#              (default "none 1/2 1/4")
#      ARGS    more main-node flags for every run (e.g. "--queries 20"); each
#              run's query answers go to results/ooc-DATE-answers.tsv
#      SKETCH_DIR  parent of the --sketch-dir directories, on the disk to
#              measure (default the stream's directory)
# Each limited run gets --memory-limit auto (the cgroup's limit) and a
# fresh --sketch-dir; the unlimited one runs in a cgroup without a limit,
# so that its peak usage (page cache included) is measured the same way.
# Writes the runs to results/ooc-DATE.tsv, the query answers to
# results/ooc-DATE-answers.tsv and the table to results/ooc-DATE.md (CPU,
# disk and its fio rates, Go version and commit at the top); -COMMIT is
# added to the names when that day's table exists.
# Every run holds /tmp/sketchcc-bench.lock.
set -euo pipefail
bin=$1
stream=$2
runs=${3:-3}
limits=${LIMITS:-none 1/2 1/4}
parent=${SKETCH_DIR:-$(dirname "$stream")}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cd "$here/.."
day=$(date -u +%F)
table=$(dated_table "ooc")
tsv=${table%.md}.tsv
answers=${table%.md}-answers.tsv
: >"$tsv"
: >"$answers"
cg=/sys/fs/cgroup/memory/sketchcc-ooc-$$
work=$(mktemp -d "$parent/sketchcc-ooc.XXXXXX")
cleanup() {
	if [ -d "$cg" ]; then
		echo 0 >"$cg/memory.force_empty" 2>/dev/null || true
		rmdir "$cg" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# sketch bytes, from an unlimited run's --json (the table's unit)
sketch=$(flock /tmp/sketchcc-bench.lock "$bin" --stream "$stream" --json --progress never |
	python3 -c "import json,sys; print(json.load(sys.stdin)['sketch_bytes'])")
name=$(basename "$stream" .bin)

# run_limited FRACTION RUN: one run in a fresh cgroup, one tsv line.
run_limited() {
	local frac=$1 r=$2 bytes=-1 args=(${ARGS:-}) out rc=0
	mkdir "$cg"
	if [ "$frac" != none ]; then
		bytes=$(python3 -c "from fractions import Fraction as F; print(int($sketch * F('$frac')))")
		echo "$bytes" >"$cg/memory.limit_in_bytes"
		mkdir -p "$work/sk"
		args+=(--memory-limit auto --sketch-dir "$work/sk")
	fi
	out=$(flock /tmp/sketchcc-bench.lock sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" \
		"$bin" --stream "$stream" --json --progress never "${args[@]}") || rc=$?
	local peak failcnt
	peak=$(cat "$cg/memory.max_usage_in_bytes")
	failcnt=$(cat "$cg/memory.failcnt")
	echo 0 >"$cg/memory.force_empty" 2>/dev/null || true
	rmdir "$cg"
	rm -rf "$work/sk"
	if [ "$rc" -ne 0 ]; then
		printf '%s\t%s\t%s\t%s\tFAILED exit %s\t%s\n' "$name" "$frac" "$bytes" "$r" "$rc" "$peak" | tee -a "$tsv"
		return
	fi
	echo "$out" | python3 -c "import json,sys; print('$frac', $r, *[q['components'] for q in json.load(sys.stdin)['queries']], sep='\t')" >>"$answers"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$frac" "$bytes" "$r" "$(echo "$out" | python3 -c "
import json,sys; d=json.load(sys.stdin); m=d['memory']
print(d['components'], d['updates_per_second'], d['end_to_end_seconds'], d['query_seconds'], d['peak_rss_bytes'],
      m['disk_read_bytes'], m['disk_written_bytes'], m.get('ranges', 0), m['batch_factor'], sep='\t')")" \
		"$peak" "$failcnt" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$tsv"
}

for r in $(seq "$runs"); do
	for frac in $limits; do
		run_limited "$frac" "$r"
	done
done

disk=$(df --output=source "$parent" | tail -1)
# The disk's rates, with fio when it is installed (Debian: apt-get install fio).
rates="not measured (no fio)"
if command -v fio >/dev/null; then
	rates=""
	for job in "read 1M" "randread 16k" "randwrite 16k"; do
		set -- $job
		rates+=$(flock /tmp/sketchcc-bench.lock fio --name=d --filename="$work/fio.tmp" --size=1G --direct=1 --ioengine=libaio \
			--iodepth=16 --rw="$1" --bs="$2" --runtime=8 --time_based --output-format=json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin)['jobs'][0]; k='write' if 'write' in '$1' else 'read'
print('$1 $2: %.0f MB/s (%.0f IOPS); ' % (d[k]['bw_bytes']/1e6, d[k]['iops']), end='')")
	done
	rm -f "$work/fio.tmp"
	rates+="fio $(fio --version), O_DIRECT, libaio, queue depth 16, 8 s each"
fi
{
	echo "# Sketches bigger than memory: $name under memory cgroup limits, $day"
	echo
	echo "CPU: $(cpu_name), $(nproc) cores; $(go version | cut -d' ' -f3); main-node: $("$bin" --version 2>&1 | head -1), built from commit $(git rev-parse --short HEAD)."
	echo "Sketch and spill files on $disk; its rates: $rates."
	echo "Command: results/bench-ooc.sh $bin $stream $runs (LIMITS=\"$limits\" ARGS=\"${ARGS:-}\"). Limits are fractions of the sketch bytes"
	echo "($sketch), set on a cgroup v1 memory.limit_in_bytes (page cache counted); main-node runs with --memory-limit auto"
	echo "and --sketch-dir. Runs interleaved limit by limit, each under /tmp/sketchcc-bench.lock; the machine is shared"
	echo "with other engineers' builds, so the load average is given per run. Medians over the runs."
	echo
	python3 - "$tsv" <<'EOF'
import sys, statistics as st
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
cells, order, failed = {}, [], []
for r in rows:
    if r[4].startswith('FAILED'):
        failed.append(r)
        continue
    name, frac, limit, run, comps, ups, e2e, q, rss, rd, wr, ranges, bf, peak, fails, load = r
    if frac not in cells:
        order.append(frac)
    cells.setdefault(frac, []).append(dict(limit=int(limit), comps=comps, ups=float(ups), e2e=float(e2e), q=float(q),
        rss=int(rss), rd=int(rd), wr=int(wr), ranges=int(ranges), bf=float(bf), peak=int(peak), load=load))
def med(c, k): return st.median(x[k] for x in c)
base = cells.get('none')
print("| limit | bytes | runs | components | updates/s (M), each run | median | vs no limit | wall s | final query s | vs no limit | peak RSS MB | cgroup peak MB | disk read GB | disk written GB | ranges | batch factor | load average |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for frac in order:
    c = cells[frac]
    ups = med(c, 'ups')
    vs = f"{ups / med(base, 'ups'):.0%}" if base else "-"
    qvs = f"{med(c, 'q') / med(base, 'q'):.1f}×" if base else "-"
    print(f"| {frac} | {c[0]['limit'] if c[0]['limit'] > 0 else '-'} | {len(c)} | {', '.join(sorted({x['comps'] for x in c}))} | "
          f"{', '.join('%.2f' % (x['ups']/1e6) for x in c)} | {ups/1e6:.2f} | {vs} | {med(c, 'e2e'):.2f} | {med(c, 'q'):.3f} | {qvs} | "
          f"{med(c, 'rss')/1e6:.0f} | {med(c, 'peak')/1e6:.0f} | {med(c, 'rd')/1e9:.2f} | {med(c, 'wr')/1e9:.2f} | "
          f"{c[0]['ranges'] or '-'} | {c[0]['bf']:.3g} | {'; '.join(x['load'] for x in c)} |")
for r in failed:
    print(f"\nFAILED: limit {r[1]} ({r[2]} bytes), run {r[3]}: {r[4]}, cgroup peak {int(r[5])/1e6:.0f} MB")
EOF
} >"$table"
echo "wrote $table" >&2
