#!/usr/bin/env bash
# Big streams (issue 28): one whole-process main-node run per call, its
# figures appended as one JSON line to a .jsonl file; `--table` renders a
# file of such lines as the dated Markdown table of the issue's must-show 5.
#
# Usage:
#   results/bench-big.sh run OUT.jsonl LABEL STREAM CACHE THROTTLE [-- MAIN_NODE_FLAGS...]
#     STREAM    a stream file, or "gen:ARGS" to run `streamtool gen ARGS -o -`
#               into main-node --stream - (the generator's count of
#               components is kept beside main-node's, as it is from
#               STREAM.gen.json for a file streamtool gen wrote)
#     CACHE     cold (echo 3 > /proc/sys/vm/drop_caches first; needs root)
#               or warm (the file is read once first)
#     THROTTLE  0, or bytes per second: the run is put in a blkio cgroup
#               (v1) whose read_bps_device limit is THROTTLE on the
#               stream's device (needs root)
#   results/bench-big.sh disk FILE         sequential rate of FILE's device:
#               dd iflag=direct, 16 MiB blocks, 4 GiB (MB/s on stdout)
#   results/bench-big.sh table IN.jsonl    the Markdown table on stdout
# Env: BIN=dir holding main-node and streamtool (default: built into a
# temporary dir from this checkout). Each run holds /tmp/sketchcc-bench.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh

cmd=${1:?usage: see the head of $0}
shift

if [ "$cmd" = disk ]; then
	dd if="$1" of=/dev/null iflag=direct bs=16M count=256 2>&1 |
		sed -n 's/.* copied, \([0-9.]*\) s, .*/\1/p' | awk '{printf "%.0f\n", 4294967296/$1/1e6}'
	exit
fi

if [ "$cmd" = table ]; then
	python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| run | stream | format | bytes/update | cache | throttle MB/s | readers | cores busy | updates/s | sys ns/update | peak RSS | RSS / sketch | components (expected) |")
print("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
for r in rows:
    thr = "-" if not r["throttle"] else "%.0f" % (r["throttle"] / 1e6)
    exp = r.get("expected_components")
    comp = "%d (%s)" % (r["components"], "-" if exp is None else exp)
    print(f"| {r['label']} | {r['stream']} | {r['format']} | {r['bytes_per_update']:.3f} | {r['cache']} | {thr} | "
          f"{r['readers']} | {r['cores_busy']:.2f} | {r['rate']/1e6:.2f} M | {r['sys_ns']:.1f} | "
          f"{r['rss']/2**30:.2f} GiB | {r['rss']/r['sketch_bytes']:.2f}× | {comp} |")
PY
	exit
fi

[ "$cmd" = run ] || { echo "unknown command $cmd" >&2; exit 2; }
out=$1 label=$2 stream=$3 cache=$4 throttle=$5
shift 5
[ "${1:-}" = -- ] && shift
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
bin=${BIN:-$t/bin}
[ -n "${BIN:-}" ] || go build -o "$bin/" ./cmd/main-node ./cmd/streamtool

src=(--stream "$stream")
gen=
if [[ $stream == gen:* ]]; then
	gen=${stream#gen:}
	src=(--stream -)
elif [ "$cache" = warm ]; then
	cat "$stream" >/dev/null
fi

cg=
if [ "$throttle" != 0 ]; then
	dev=$(lsblk -no PKNAME "$(df --output=source "${gen:+/tmp}${gen:-$stream}" | tail -1)" 2>/dev/null || true)
	majmin=$(cat "/sys/block/${dev:-vda}/dev")
	cg=/sys/fs/cgroup/blkio/sketchcc-bench-$$
	mkdir -p "$cg"
	echo "$majmin $throttle" >"$cg/blkio.throttle.read_bps_device"
fi

# The run, as a script of its own so that it runs under the lock and, with
# a throttle, moves itself into the cgroup before exec.
{
	echo 'set -e'
	[ "$cache" = cold ] && echo 'sync; echo 3 >/proc/sys/vm/drop_caches'
	[ -n "$cg" ] && echo "echo \$\$ >$cg/cgroup.procs"
	tm="/usr/bin/time -f '%e %U %S %M' -o $t/time"
	if [ -n "$gen" ]; then
		echo "$bin/streamtool gen $gen -o - 2>$t/gen.log >$t/fifo &"
		echo "$tm $bin/main-node --stream - --json --progress never $* <$t/fifo >$t/out.json"
		echo "wait"
	else
		echo "exec $tm $bin/main-node --stream '$stream' --json --progress never $* >$t/out.json"
	fi
} >"$t/run.sh"
[ -n "$gen" ] && mkfifo "$t/fifo"
flock /tmp/sketchcc-bench.lock bash "$t/run.sh"
[ -n "$cg" ] && rmdir "$cg"

python3 - "$t" "$label" "$stream" "$cache" "$throttle" "$(cpu_name)" "$(go version | cut -d' ' -f3)" \
	"$(git rev-parse --short HEAD)$([ -z "$(git status --porcelain -- '*.go' '*.s')" ] || echo '-dirty')" >>"$out" <<'PY'
import json, os, sys
t, label, stream, cache, throttle, cpu, gover, commit = sys.argv[1:]
wall, user, sys_s, rss_kb = map(float, open(t + "/time").read().split())
d = json.load(open(t + "/out.json"))
u = d["updates"]
gen = None
for line in open(t + "/gen.log") if os.path.exists(t + "/gen.log") else []:
    if "components=" in line:  # the generator's count, logged as it starts writing
        gen = dict(components=int(line.split("components=")[1].split()[0]))
summary = stream + ".gen.json"  # streamtool gen's summary beside a file it wrote
if not stream.startswith("gen:") and os.path.exists(summary):
    gen = dict(components=json.load(open(summary))["components"])
if stream.startswith("gen:"):
    fmt, size = "binary (pipe)", 12 + 9 * u
else:
    with open(stream, "rb") as f:
        fmt = "packed" if f.read(8)[4:] == b"SCPK" else "binary"
    size = os.path.getsize(stream)
row = dict(label=label, stream=os.path.basename(stream) if not stream.startswith("gen:") else stream,
           format=fmt, bytes_per_update=size / u if u else 0, cache=cache, throttle=int(throttle),
           readers=d.get("readers"), wall=wall, user=user, sys=sys_s, cores_busy=(user + sys_s) / wall,
           rate=u / wall, json_rate=d["updates_per_second"], sys_ns=sys_s * 1e9 / u if u else 0,
           rss=rss_kb * 1024, sketch_bytes=d["sketch_bytes"], components=d["components"],
           expected_components=gen.get("components") if gen else None,
           updates=u, cpu=cpu, go=gover, commit=commit)
print(json.dumps(row))
PY
tail -1 "$out" >&2
