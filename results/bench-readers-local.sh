#!/usr/bin/env bash
# Single machine, parallel readers against a baseline commit: runs
# `main-node --stream S --json` built from BASE (default: core) and from
# HEAD with its default --readers and with each of READERS, interleaved,
# and writes a dated Markdown table to results/readers-local-<date>.md:
# updates/s end to end, components (checked against S.gen.json), main CPU
# ns per update with its read / insert / apply split and busiest
# goroutine, and peak RSS; then the ratio of medians against BASE.
#
# Usage: results/bench-readers-local.sh STREAM.bin [STREAM.bin ...]
# Env:   BASE=core (any commit); READERS="2"; RUNS=3; LOCK=/tmp/sketchcc-bench.lock
set -euo pipefail
cd "$(dirname "$0")/.."
. results/lib.sh
[ $# -ge 1 ] || { sed -n 2,12p "$0" >&2; exit 2; }
base=${BASE:-core}
readers=(${READERS:-2})
runs=${RUNS:-3}
lock=${LOCK:-/tmp/sketchcc-bench.lock}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/head" ./cmd/main-node
mkdir "$bin/src"
git archive "$base" | tar -x -C "$bin/src"
(cd "$bin/src" && go build -o "$bin/base" ./cmd/main-node)

date=$(date -u +%Y-%m-%d)
out=$(dated_table readers-local)
cpu=$(cpu_name)
{
	echo "# Single machine: parallel readers against $base, $date"
	echo
	echo "- machine: $cpu, $(nproc) cores; other processes may share it (load average at the start: $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "- $(go version)"
	echo "- commit: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)') against $base ($(git rev-parse --short "$base"))"
	echo "- \`main-node --stream S --json\` at default settings (head: default --readers = cores/4 = $(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 ))),"
	echo "  and head with --readers R; $runs interleaved runs of each; process CPU = user + system CPU of the whole process per update (/usr/bin/time);"
	echo "  main CPU = the same from ingestion's start, split by stage (head's main_cpu)"
	echo
	echo "| stream | binary | run | components (exact) | updates/s | process CPU ns/upd | main CPU ns/upd (profiled span) | read / insert / apply / other / unsampled | busiest goroutine ns/upd | peak RSS |"
	echo "|---|---|---:|---|---:|---:|---:|---|---|---:|"
} >"$out.tmp"

row() { # stream label run json exact
	python3 - "$@" >>"$out.tmp" <<'PY'
import json, sys
stream, label, run, path, exact, tpath = sys.argv[1:]
j = json.load(open(path))
u, s = (float(x) for x in open(tpath).read().split()[:2])
proc = (u + s) * 1e9 / j["updates"]
m = j.get("main_cpu") or {}
st = m.get("stages_ns_per_update", {})
stages = " / ".join(f"{st[s]:.1f}" for s in ("read", "insert", "apply", "other", "unsampled")) if st else "-"
busy = f"{m['busiest_goroutine']} {m['busiest_goroutine_ns_per_update']:.1f}" if m else "-"
tot = f"{m['total_ns_per_update']:.1f}" if m else "-"
ok = "yes" if j["components"] == int(exact) else f"NO (want {exact})"
print(f"| {stream} | {label} | {run} | {j['components']} ({ok}) | {j['updates_per_second']/1e6:.2f} M | {proc:.1f} | {tot} | {stages} | {busy} | {j['peak_rss_bytes']/2**20:.0f} MiB |")
PY
	tail -1 "$out.tmp" >&2
}

declare -A rates
for f in "$@"; do
	exact=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["components"])' "$f.gen.json")
	name=$(basename "$f" .bin)
	for i in $(seq "$runs"); do
		for cfg in base head "${readers[@]}"; do
			case $cfg in
			base) args=("$bin/base"); label=$base ;;
			head) args=("$bin/head"); label="head" ;;
			*) args=("$bin/head" --readers "$cfg"); label="head --readers $cfg" ;;
			esac
			flock "$lock" /usr/bin/time -f "%U %S" -o "$bin/time" "${args[@]}" --stream "$f" --json --progress never >"$bin/out.json"
			row "$name" "$label" "$i" "$bin/out.json" "$exact" "$bin/time"
			rates[$name,$label]+="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["updates_per_second"])' "$bin/out.json") "
		done
	done
done
{
	echo
	echo "Median updates/s, and the ratio to $base's median:"
	echo
	for key in "${!rates[@]}"; do echo "$key ${rates[$key]}"; done | sort | python3 -c '
import sys, statistics
rows = [l.split() for l in sys.stdin]
med = {}
for r in rows:
    name, label = r[0].split(",", 1)[0], " ".join(r[0].split(",", 1)[1:] + r[1:-'"$runs"'])
    med[(name, label)] = statistics.median(float(x) for x in r[-'"$runs"':])
for (name, label), m in sorted(med.items()):
    b = med.get((name, "'"$base"'"))
    print(f"- {name} {label}: {m/1e6:.2f} M updates/s" + (f", {m/b:.3f}× {chr(39)}'"$base"'{chr(39)}" if b else ""))
'
} >>"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out" >&2
