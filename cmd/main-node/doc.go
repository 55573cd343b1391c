// Command main-node ingests an edge-update stream into per-vertex sketches
// and answers a connected-components query over the final graph.
//
// Pipeline: one reader goroutine decodes the stream (binary by default,
// --format text for the text formats) and inserts each update into both
// endpoints' gutters; full gutters become batches that --workers delta
// workers XOR into the vertex sketches; at the end the gutters are flushed
// and Boruvka's algorithm runs over the sketches.
//
// Usage:
//
//	main-node --stream FILE [--json] [--labels FILE] [--forest FILE]
//
// stdout gets a short human summary, or with --json exactly one JSON
// object; stderr gets logs and, when it is a terminal, a progress bar.
// Exit status: 0 on success, 1 on a runtime or input error, 2 on a usage
// error.
package main
