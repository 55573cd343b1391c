// Command main-node ingests an edge-update stream into per-vertex sketches
// and answers connected-components queries during and at the end of it.
//
// Pipeline (package ingest): the calling goroutine decodes the stream
// (binary by default, --format text for the text formats) and inserts each
// update into both endpoints' gutters; full gutters become batches that
// --workers delta workers XOR into the vertex sketches through the sketch
// store (package store). Queries (package cc): the query schedule reads the
// stream in segments that end at the query positions; a query flushes the
// gutters (the querying goroutine sketches gutters itself when the batch
// queue is full) and runs Boruvka's algorithm over the sketches on all
// cores; while the greedy shortcut's DSU is valid a query is answered from
// it without a flush. Ingestion resumes after each query. This command
// holds the flags, the output formats and the files.
//
// With --listen the main node also starts a memberlist cluster that
// worker processes (cmd/worker) join, and ships batches to them through
// package distributor, which merges each delta exactly once whatever the
// workers do; --local-workers 0 leaves all delta work to them while any
// is connected (cluster.go).
//
// With --checkpoint-dir it saves the sketches, the stream offset, the
// greedy forest and the parameters every --checkpoint-every and on
// SIGTERM or SIGINT, at a barrier (package checkpoint; checkpoint.go);
// --resume continues such a run on the same stream with the same answer.
//
// With --metrics-listen it serves Prometheus metrics read from the
// engine's and the distributors' counters at scrape time (metrics.go);
// --log-format json writes the logs as JSON lines; --version prints the
// module version, commit and Go version.
//
// Usage:
//
//	main-node --stream FILE [--json] [--queries K | --query-at N1,N2,… ...]
//	          [--point-queries FILE] [--labels FILE] [--forest FILE]
//	          [--listen HOST:PORT [--local-workers N] [--expect-workers N]
//	           [--cluster-key-file F]]
//	          [--metrics-listen ADDR [--metrics-linger D]] [--log-format text|json]
//	          [--checkpoint-dir DIR [--checkpoint-every D]] [--resume DIR] [--rate-limit N]
//	main-node --version
//
// --query-at may be repeated; its positions add up, and a position given
// twice is queried once with a warning. A stream of 0 updates is answered
// as its V isolated vertices. Before allocating, the memory check
// (memory.go) refuses a stream whose sketch or gutter slab alone exceeds
// the machine's memory and swap, or whose fill estimate does; a sparse
// stream is estimated at about a page per vertex, not at both full slabs.
//
// stdout gets a short human summary, or with --json exactly one JSON
// object; stderr gets logs and, when it is a terminal, a progress bar
// whose rate shows once it spans a second.
// Exit status: 0 on success, 1 on a runtime or input error, 2 on a usage
// error. The first Ctrl-C (or SIGTERM) stops ingestion and prints no
// answer, after writing a checkpoint with --checkpoint-dir; a second one
// kills the process.
package main
