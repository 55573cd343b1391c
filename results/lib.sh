# Shared by the benchmark scripts (source it; it runs nothing).

# kron_stream STREAMTOOL DIR SCALE: prints DIR/kronSCALE.bin, generating it
# first with `streamtool gen kron --scale SCALE --seed 1` when missing. From
# scale 16 on it skips the final edge list (about 50 GB at scale 17) and
# writes in passes of 2^30 updates, so the generator never holds the edge set.
kron_stream() {
	local tool=$1 dir=$2 s=$3
	local f=$dir/kron$s.bin
	mkdir -p "$dir"
	if [ ! -f "$f" ]; then
		echo "generating $f" >&2
		local big=()
		[ "$s" -ge 16 ] && big=(--no-cum --pass-updates 1073741824)
		"$tool" gen kron --scale "$s" --seed 1 "${big[@]}" -o "$f" >"$f.gen.json"
	fi
	echo "$f"
}

# dated_table NAME: prints results/NAME-DATE.md (UTC date), or, when a
# table of that name and date is there already, results/NAME-DATE-COMMIT.md,
# so that a second run on one day never replaces the first one's table.
dated_table() {
	local f=results/$1-$(date -u +%Y-%m-%d)
	if [ -e "$f.md" ]; then
		f=$f-$(git rev-parse --short HEAD)
	fi
	echo "$f.md"
}

# main_addr LOG: waits up to 20 s for main-node's "main node listening"
# line in LOG and prints its address; without one it prints LOG on stderr
# and fails.
main_addr() {
	local addr=
	for _ in $(seq 400); do
		addr=$(sed -n 's/.*msg="main node listening" addr=\([^ ]*\).*/\1/p' "$1" 2>/dev/null | head -1)
		[ -n "$addr" ] && break
		sleep 0.05
	done
	[ -n "$addr" ] || { cat "$1" >&2; return 1; }
	echo "$addr"
}

# cpu_name: the CPU as every table names it, lscpu's model name with its
# family and model (vendors and generations differ by 2x on the kernel),
# and AVX-512 when the CPU has it.
cpu_name() {
	local name family model
	name=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
	family=$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
	model=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
	echo "$name (family $family, model $model$(grep -qw avx512f /proc/cpuinfo && echo ', AVX-512'))"
}
