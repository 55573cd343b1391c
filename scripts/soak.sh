#!/usr/bin/env bash
# Soak test of the scale-out path on loopback (not part of CI's run):
# a main node reads a looping Kronecker stream at a fixed rate for
# DURATION seconds while workers join, leave (SIGTERM), are SIGKILLed and
# come back under the same --name; the main node is paused (SIGSTOP for
# 12-20 s, longer than the workers' failure detection) and resumed, and
# the workers must rejoin; a worker, wp, sits behind scripts/flipproxy.py,
# which flips one bit of a frame of batches or deltas on demand, and the
# bad-frame counters must count each flip; IDLE idle connections are held
# on the main node's --metrics-listen while a scrape is timed. Every
# query's labels are compared with union-find (streamtool cc), and the
# main node's RSS and goroutine count are sampled every 5 s from its
# --metrics-listen endpoint.
#
# Usage: scripts/soak.sh BIN [DURATION]
#   BIN       directory holding main-node, worker and streamtool
#   DURATION  seconds of stream (default 600)
# Env: RATE   updates per second fed to the main node's stdin (default 100000)
#      SCALE  Kronecker scale of one loop of the stream (default 12)
#      WORK   working directory (default a new one under /tmp, removed
#             at the end unless the soak fails)
#      SEED   seed of the churn and of the proxy's flips (default: from the clock)
#      IDLE   idle connections held on the metrics endpoint (default 300)
# The looped stream (fed through a pipe, never written to disk) repeats
# one kron stream of n updates C times; as every
# update toggles its edge, the graph after p updates is the graph after
# p mod 2n, so the truth is computed once for each residue the queries
# hit: a query after h = n/2 and after n updates of every loop.
# Prints the churn and samples as it goes, then a summary; exits 1 when an
# answer is wrong, the main node fails, the workers do not all reconnect
# after a pause, or the bad-frame counters do not match the flips.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$1" && pwd)
duration=${2:-600}
rate=${RATE:-100000}
scale=${SCALE:-12}
seed=${SEED:-$(date +%s)}
idle_conns=${IDLE:-300}
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

# wp advertises the proxy's address; the proxy forwards to its --listen,
# a port picked here. wp is not churned, so that its exit log counts
# every frame of batches the proxy flipped.
wport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$here/flipproxy.py" 127.0.0.1:0 "127.0.0.1:$wport" "$work/proxy.log" "$seed" &
proxy=$!
pids+=("$proxy")
paddr= wmaddr=
for _ in $(seq 50); do
	paddr=$(sed -n 's/^listening //p' "$work/proxy.log" 2>/dev/null | head -1 || true)
	[ -n "$paddr" ] && break
	sleep 0.1
done
[ -n "$paddr" ] || { echo "soak: the proxy did not start"; exit 1; }
"$bin/worker" --join "$addr" --name wp --listen "127.0.0.1:$wport" --advertise "$paddr" \
	--metrics-listen 127.0.0.1:0 --gossip-local --threads 1 --log-level info 2>>"$work/wp.log" &
wp=$!
pids+=("$wp")
for _ in $(seq 50); do
	wmaddr=$(sed -n 's/.*msg="metrics listening" addr=\([^ ]*\).*/\1/p' "$work/wp.log" 2>/dev/null | head -1 || true)
	[ -n "$wmaddr" ] && break
	sleep 0.1
done
[ -n "$wmaddr" ] || { echo "soak: wp did not start:"; cat "$work/wp.log"; exit 1; }

# metric ADDR NAME prints the sum of NAME's series at ADDR (0 if none).
metric() {
	{ curl -s --max-time 5 "http://$1/metrics" 2>/dev/null || true; } |
		awk -v m="$2" '$1 == m || index($1, m "{") == 1 {s += $2} END {print s + 0}'
}
# lines PATTERN FILE... prints the number of lines of the FILEs matching PATTERN.
lines() { cat "${@:2}" 2>/dev/null | grep -c -- "$1" || true; }
live_workers() {
	local n=0 w
	for w in w1 w2 w3 w4; do
		if [ -n "${wpid[$w]:-}" ] && kill -0 "${wpid[$w]}" 2>/dev/null; then n=$((n + 1)); fi
	done
	if kill -0 "$wp" 2>/dev/null; then n=$((n + 1)); fi
	echo "$n"
}

# pause stops the main node for 12-20 s, then waits (up to 60 s) until
# every worker that declared it dead has rejoined and as many workers are
# connected as are running; it counts the data connections the main node
# made again meanwhile.
pauses=() last_pause=-1000
pause() {
	local d=$((12 + RANDOM % 9)) dead0 rej0 conn0 dead rej live got waited
	dead0=$(lines 'declared the main node dead' "$work"/w*.log)
	rej0=$(lines 'rejoined the cluster' "$work"/w*.log)
	conn0=$(lines 'msg="worker connected"' "$work/main.log")
	echo "${now}s: main node SIGSTOPped for $d s"
	kill -STOP "$main"
	sleep "$d"
	kill -CONT "$main"
	for ((waited = 1; waited <= 60; waited++)); do
		sleep 1
		dead=$(($(lines 'declared the main node dead' "$work"/w*.log) - dead0))
		rej=$(($(lines 'rejoined the cluster' "$work"/w*.log) - rej0))
		live=$(live_workers)
		got=$(metric "$maddr" sketchcc_workers_connected)
		if ((rej >= dead && got >= live)) || ! kill -0 "$main" 2>/dev/null; then break; fi
	done
	conn0=$(($(lines 'msg="worker connected"' "$work/main.log") - conn0))
	echo "${now}s: after SIGCONT, $dead workers had declared the main node dead, $rej rejoined;" \
		"$got of $live workers connected after $waited s ($conn0 data connections made again)"
	pauses+=("$d $dead $rej $got $live $waited $conn0")
	last_pause=$now
}

# flip has the proxy flip one bit of the next frame of deltas (SIGUSR1)
# or batches (SIGUSR2) between wp and the main node, and waits for the
# flip and for its reader's bad-frame counter: the main node's
# sketchcc_bad_frames_total for deltas, wp's
# sketchcc_worker_bad_frames_total for batches.
flip() {
	local kind=batches sig=USR2 at=$wmaddr name=sketchcc_worker_bad_frames_total before flipped=0 want got waited
	if ((RANDOM % 2)); then kind=deltas sig=USR1 at=$maddr name=sketchcc_bad_frames_total; fi
	before=$(lines "^flipped $kind" "$work/proxy.log")
	kill -"$sig" "$proxy"
	for ((waited = 0; waited < 20; waited++)); do
		flipped=$(($(lines "^flipped $kind" "$work/proxy.log") - before))
		if ((flipped > 0)) || ! kill -0 "$main" 2>/dev/null; then break; fi
		sleep 1
	done
	want=$(lines "^flipped $kind" "$work/proxy.log")
	for ((waited = 0; waited < 10; waited++)); do
		got=$(metric "$at" "$name")
		if ((got >= want)) || ! kill -0 "$main" 2>/dev/null; then break; fi
		sleep 1
	done
	echo "${now}s: proxy asked to flip a bit of a frame of $kind: flipped $flipped;" \
		"$name $got for $want flipped so far"
}

# idle holds IDLE connections to the metrics endpoint, each sending
# nothing, and times a scrape while they are held; it prints the scrape's
# status and seconds, and the main node's open descriptors.
idle_scrapes=()
idle() {
	local out
	out=$(python3 - "$maddr" "$idle_conns" "$main" <<'EOF'
import os, socket, subprocess, sys
host, port = sys.argv[1].rsplit(':', 1)
socks = [socket.create_connection((host, int(port))) for _ in range(int(sys.argv[2]))]
fds = len(os.listdir(f'/proc/{sys.argv[3]}/fd'))
r = subprocess.run(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', '--max-time', '60',
                    f'http://{sys.argv[1]}/metrics'], capture_output=True, text=True)
print(r.stdout if r.returncode == 0 else f'curl-exit-{r.returncode} -', fds)
EOF
)
	echo "${now}s: $idle_conns idle metrics connections held: scrape status, seconds, main-node fds: $out"
	idle_scrapes+=("$out")
}

sample() {
	local rss gor
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$main/status" 2>/dev/null || echo 0)
	gor=$({ curl -s --max-time 10 "http://$maddr/metrics" 2>/dev/null || true; } | awk '$1 == "go_goroutines" {print $2}')
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
	# One draw in twelve each pauses the main node (at most every 45 s),
	# has the proxy flip a bit, or holds idle metrics connections; the
	# rest churn w1-w4.
	now=$(($(date +%s) - t0))
	case $((RANDOM % 12)) in
	0) if ((now - last_pause >= 45)); then pause; continue; fi ;;
	1) flip; continue ;;
	2) idle; continue ;;
	esac
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

# The main node told wp to stop: its exit log counts the frames of
# batches that failed their check; the main node's --json counts those
# of deltas. Each must be the proxy's flips of that kind, and on every
# connection batches = deltas_merged + batches_resent + batches_late.
for _ in $(seq 100); do
	kill -0 "$wp" 2>/dev/null || break
	sleep 0.1
done
flipped_deltas=$(lines '^flipped deltas' "$work/proxy.log")
flipped_batches=$(lines '^flipped batches' "$work/proxy.log")
wp_bad=$(sed -n 's/.*msg="stopped serving" .*bad_frames=\([0-9]*\).*/\1/p' "$work/wp.log" | tail -1)
counted=0
python3 - "$work/summary.json" "$flipped_deltas" "$flipped_batches" "${wp_bad:-?}" <<'EOF' || counted=1
import json, sys
d = json.load(open(sys.argv[1]))
fd, fb, wb = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
wp = [w for w in d.get("workers") or [] if w["name"] == "wp"]
wpb = wp[0]["bad_frames"] if wp else 0
conns = [c for w in d.get("workers") or [] for c in w["connections"]]
off = [c for c in conns if c["batches"] != c["deltas_merged"] + c["batches_resent"] + c["batches_late"]]
print(f"soak: bad frames: the proxy flipped {fd} frames of deltas and {fb} of batches; the main node counted"
      f" {d.get('bad_frames', 0)} (wp {wpb}), wp {wb}; {len(conns)} connections, {len(off)} whose counters"
      f" do not add up; {d.get('duplicate_deltas', 0)} duplicate deltas; workers_left {d.get('workers_left', 0)},"
      f" workers_failed {d.get('workers_failed', 0)}")
for c in off:
    print(f"soak: counters do not add up: {c}")
sys.exit(0 if d.get("bad_frames", 0) == fd == wpb and wb == str(fb) and not off else 1)
EOF
short=0
for p in "${pauses[@]}"; do
	read -r d dead rej got live waited conns <<<"$p"
	echo "soak: pause $d s: $dead declared the main node dead, $rej rejoined, $got of $live connected after $waited s," \
		"$conns data connections made again"
	if ((rej < dead || got < live)); then short=$((short + 1)); fi
done
for i in "${idle_scrapes[@]}"; do
	echo "soak: scrape with $idle_conns idle metrics connections held: status, seconds, main-node fds: $i"
done
echo "soak: $end s, main-node exit $code, $checked queries checked, $bad wrong; churn: $kills SIGKILL+restart," \
	"$terms SIGTERM, $joins joins, ${#pauses[@]} pauses, $flipped_deltas+$flipped_batches flips (deltas+batches)," \
	"${#idle_scrapes[@]} idle holds; $(lines 'rejoined the cluster' "$work"/w*.log) rejoins; $vertices vertices"
if ((code != 0 || bad > 0 || counted != 0 || short > 0)); then
	echo "soak: FAILED; logs in $work"
	exit 1
fi
[ -n "${WORK:-}" ] || rm -rf "$work"
