// Command streamtool builds, converts and checks edge-update streams for
// sketchcc: the binary format of package stream (12-byte header, 9-byte
// records), its packed format (1 + 2·⌈log2 V⌉ bits an update in checksummed
// blocks; read wherever a binary stream is, detected from its header) and
// the untyped text "cumulative" format for ground truth.
//
//	streamtool gen kron --scale N [--seed S] -o OUT        Kronecker stream (+ OUT.cum; --format packed)
//	streamtool gen erdos --vertices N --density P -o OUT   Erdős–Rényi stream (+ OUT.cum)
//	streamtool convert --from FORMAT IN -o OUT             edge list -> inserts (+ OUT.map)
//	streamtool snapshots --from FORMAT A B ... -o OUT      snapshot diffs (+ OUT.map)
//	streamtool temporal --window W IN -o OUT               expiring temporal edges (+ OUT.map)
//	streamtool pack IN -o OUT                              binary -> packed (digest checked)
//	streamtool unpack IN -o OUT                            packed -> binary, byte-identical
//	streamtool validate FILE                               well-formedness check
//	streamtool cc FILE [--format binary|text]              exact components (ground truth)
//
// Every command prints one JSON object on stdout and logs to stderr
// (--log-level). Exit status: 0 success, 1 runtime or input error (the
// message names the file and line or update index and byte offset), 2 usage
// error. Output files are written under temporary names and renamed into
// place only on success, so a failed command leaves none behind. SIGINT and
// SIGTERM stop every command while it reads or writes: it removes its
// partial output and exits 1 with "COMMAND interrupted (SIGNAL signal
// received), no output written: ...".
//
// The logic lives in sketchcc/offline/streamgen (generators and stream
// builders), sketchcc/offline/edgelist (parsers and relabelling) and
// sketchcc/offline/replay (exact replay and validation).
package main
