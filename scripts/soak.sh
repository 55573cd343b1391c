#!/usr/bin/env bash
# Soak test of the scale-out path on loopback (not part of CI's run):
# a main node reads a looping Kronecker stream at a fixed rate for
# DURATION seconds while workers join, leave (SIGTERM), are SIGKILLed and
# come back under the same --name. Every query's labels are compared with
# union-find (streamtool cc), and the main node's RSS and goroutine count
# are sampled every 5 s from its --metrics-listen endpoint.
#
# Usage: scripts/soak.sh BIN [DURATION]
#   BIN       directory holding main-node, worker and streamtool
#   DURATION  seconds of stream (default 600)
# Env: RATE   updates per second fed to the main node's stdin (default 100000)
#      SCALE  Kronecker scale of one loop of the stream (default 12)
#      WORK   working directory (default a new one under /tmp, removed
#             at the end unless the soak fails)
#      SEED   seed of the churn (default: from the clock)
# The looped stream (fed through a pipe, never written to disk) repeats
# one kron stream of n updates C times; as every
# update toggles its edge, the graph after p updates is the graph after
# p mod 2n, so the truth is computed once for each residue the queries
# hit: a query after h = n/2 and after n updates of every loop.
# Prints the churn and samples as it goes, then a summary; exits 1 when an
# answer is wrong or the main node fails.
set -euo pipefail
bin=$(cd "$1" && pwd)
duration=${2:-600}
rate=${RATE:-100000}
scale=${SCALE:-12}
seed=${SEED:-$(date +%s)}
work=${WORK:-$(mktemp -d /tmp/sketchcc-soak.XXXXXX)}
mkdir -p "$work"
RANDOM=$seed
echo "soak: work dir $work, $duration s at $rate updates/s, kron$scale, churn seed $seed"

base=$work/kron$scale.bin
[ -f "$base" ] || "$bin/streamtool" gen kron --scale "$scale" --seed 1 --no-cum --log-level warn -o "$base" >/dev/null
read -r n copies < <(python3 - "$base" "$rate" "$duration" <<'EOF'
import struct, sys, math
base, rate, duration = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(base, 'rb') as f:
    v, n = struct.unpack('<IQ', f.read(12))
print(n, max(2, math.ceil(rate * duration / n)))
EOF
)
h=$((n / 2))
echo "soak: one loop is $n updates; $copies loops, $((n * copies)) updates"

# Truth for the residues h, n, n+h (the empty graph at 0 needs none): the
# first r updates of the loop (of two copies of the stream).
for r in $h $n $((n + h)); do
	python3 - "$base" "$work/prefix.bin" "$r" <<'EOF'
import struct, sys
src, out, r = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src, 'rb').read()
v, n = struct.unpack('<IQ', data[:12])
with open(out, 'wb') as g:
    g.write(struct.pack('<IQ', v, r))
    for start in range(0, r, n):
        g.write(data[12:12 + 9 * min(n, r - start)])
EOF
	"$bin/streamtool" cc --log-level warn --labels "$work/truth.$r" "$work/prefix.bin" >/dev/null
done
rm -f "$work/prefix.bin"
vertices=$(wc -l <"$work/truth.$n")
awk '{print $1, $1}' "$work/truth.$n" >"$work/truth.0"

positions=()
for ((c = 0; c < copies; c++)); do
	positions+=($((c * n + h)) $(((c + 1) * n)))
done
at=$(IFS=,; echo "${positions[*]}")

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# The feeder writes the looped stream to the main node's stdin at RATE
# updates per second: the header promises C loops, then the records of
# the stream C times.
mkfifo "$work/stream.pipe"
python3 - "$base" "$copies" "$rate" >"$work/stream.pipe" <<'EOF' &
import struct, sys, time
base, copies, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(base, 'rb').read()
v, n = struct.unpack('<IQ', data[:12])
out = sys.stdout.buffer
out.write(struct.pack('<IQ', v, n * copies))
chunk = max(1, rate // 20)  # updates per write: a twentieth of a second
t0, sent = time.monotonic(), 0
for _ in range(copies):
    for i in range(0, n, chunk):
        k = min(chunk, n - i)
        ahead = sent / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
        out.write(data[12 + 9 * i:12 + 9 * (i + k)])
        sent += k
out.close()
EOF
feeder=$!
pids+=("$feeder")
"$bin/main-node" --stream /dev/stdin --listen 127.0.0.1:0 --gossip-local --local-workers 0 \
	--expect-workers 2 --metrics-listen 127.0.0.1:0 --query-at "$at" \
	--labels "$work/labels" --json --progress never --log-level info \
	<"$work/stream.pipe" >"$work/summary.json" 2>"$work/main.log" &
main=$!
pids+=("$main")
addr= maddr=
for _ in $(seq 100); do
	# The main node's shell opens the log only once the feeder has
	# opened the pipe: the first looks may find no file.
	addr=$(sed -n 's/.*msg="main node listening" addr=\([^ ]*\).*/\1/p' "$work/main.log" 2>/dev/null | head -1 || true)
	maddr=$(sed -n 's/.*msg="metrics listening" addr=\([^ ]*\).*/\1/p' "$work/main.log" 2>/dev/null | head -1 || true)
	[ -n "$addr" ] && [ -n "$maddr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "soak: main node did not start:"; cat "$work/main.log"; exit 1; }

declare -A wpid
start_worker() {
	"$bin/worker" --join "$addr" --name "$1" --listen 127.0.0.1:0 --gossip-local --threads 1 \
		--log-level info 2>>"$work/$1.log" &
	wpid[$1]=$!
	pids+=("$!")
}
for w in w1 w2 w3; do start_worker "$w"; done

sample() {
	local rss gor
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$main/status" 2>/dev/null || echo 0)
	gor=$(curl -s "http://$maddr/metrics" 2>/dev/null | awk '$1 == "go_goroutines" {print $2}')
	printf '%s\t%s\t%s\n' "$(($(date +%s) - t0))" "$rss" "${gor:-?}" >>"$work/samples.tsv"
}
t0=$(date +%s)
printf 'seconds\trss_kib\tgoroutines\n' >"$work/samples.tsv"
kills=0 terms=0 joins=0 next_sample=0
while kill -0 "$main" 2>/dev/null; do
	now=$(($(date +%s) - t0))
	if ((now >= next_sample)); then
		sample
		next_sample=$((now + 5))
	fi
	sleep "$((2 + RANDOM % 5))"
	kill -0 "$main" 2>/dev/null || break
	w=w$((1 + RANDOM % 4))
	if [ -z "${wpid[$w]:-}" ] || ! kill -0 "${wpid[$w]}" 2>/dev/null; then
		echo "$((now))s: $w joins"
		start_worker "$w"
		joins=$((joins + 1))
		continue
	fi
	case $((RANDOM % 3)) in
	0)
		echo "$((now))s: $w SIGKILLed, restarted under the same name"
		kill -9 "${wpid[$w]}"
		wait "${wpid[$w]}" 2>/dev/null || true
		sleep 0.5
		start_worker "$w"
		kills=$((kills + 1))
		;;
	1)
		echo "$((now))s: $w SIGTERMed (leaves), back in 1 s"
		kill -TERM "${wpid[$w]}"
		wait "${wpid[$w]}" 2>/dev/null || true
		sleep 1
		start_worker "$w"
		terms=$((terms + 1))
		;;
	2)
		if [ "$w" = w4 ]; then
			echo "$((now))s: $w leaves for good (until it is drawn again)"
			kill -TERM "${wpid[$w]}"
			unset "wpid[$w]"
			terms=$((terms + 1))
		fi
		;;
	esac
done
set +e
wait "$main"
code=$?
set -e
end=$(($(date +%s) - t0))

bad=0 checked=0
last=${positions[${#positions[@]} - 1]}
for p in "${positions[@]}"; do
	f=$work/labels.$p
	[ "$p" = "$last" ] && f=$work/labels # the final answer, at the stream's end
	r=$((p % (2 * n)))
	if ! [ -f "$f" ]; then
		echo "soak: no labels after $p updates"
		bad=$((bad + 1))
	elif ! cmp -s "$f" "$work/truth.$r"; then
		echo "soak: labels after $p updates differ from union-find"
		bad=$((bad + 1))
	fi
	checked=$((checked + 1))
done
python3 - "$work/samples.tsv" <<EOF
import sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n')[1:] if l]
rows = [(int(s), int(r), int(g)) for s, r, g in rows if g.strip().isdigit() and int(r) > 0]
if rows:
    rss = [r / 1024 for _, r, _ in rows]
    gor = [g for _, _, g in rows]
    q = len(rows) // 4 or 1
    print(f"soak: main-node RSS MiB first {rss[0]:.1f}, min {min(rss):.1f}, max {max(rss):.1f}, last {rss[-1]:.1f};"
          f" mean of first quarter {sum(rss[:q])/q:.1f}, last quarter {sum(rss[-q:])/q:.1f}")
    print(f"soak: goroutines first {gor[0]}, min {min(gor)}, max {max(gor)}, last {gor[-1]};"
          f" mean of first quarter {sum(gor[:q])/q:.1f}, last quarter {sum(gor[-q:])/q:.1f} ({len(rows)} samples)")
EOF
python3 - "$work/summary.json" <<'EOF' || true
import json, sys
d = json.load(open(sys.argv[1]))
ws = ", ".join(f"{w['name']} {w['batches']}" for w in d.get("workers") or [])
print(f"soak: batches per worker connection: {ws}; resent {d.get('batches_resent', 0)}")
EOF
echo "soak: $end s, main-node exit $code, $checked queries checked, $bad wrong; churn: $kills SIGKILL+restart, $terms SIGTERM, $joins joins; $vertices vertices"
if ((code != 0 || bad > 0)); then
	echo "soak: FAILED; logs in $work"
	exit 1
fi
[ -n "${WORK:-}" ] || rm -rf "$work"
