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
