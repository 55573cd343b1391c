// Command main-node ingests an edge-update stream into per-vertex sketches
// and answers connected-components queries during and at the end of it.
//
// Pipeline (package ingest): the calling goroutine decodes the stream
// (binary by default, --format text for the text formats) and inserts each
// update into both endpoints' gutters; full gutters become batches that
// --workers delta workers XOR into the vertex sketches through the sketch
// store (package store). With --readers N > 1 (default: one per four
// cores) N goroutines read disjoint blocks of a binary stream file and
// hand each update's two neighbour ids to N gutter inserters, each owning
// a share of the vertices; every query point is a barrier all of them
// reach first. Queries (package cc): the query schedule reads the
// stream in segments that end at the query positions; with several
// queries the greedy shortcut's sets and forest are kept from the first
// update, and a query runs Boruvka's algorithm on all cores over only the
// sets a deleted forest edge re-opened, reading the gutters of the
// vertices it merges instead of flushing them (with one query, or
// --no-greedy, the query flushes the gutters and runs Boruvka over every
// vertex). Ingestion resumes after each query. This command
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
// --resume continues such a run on the same stream with the same answer,
// after checking that the stream's first updates hash as the checkpoint
// says they did. The directory is locked for the run.
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
