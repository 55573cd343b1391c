// Command main-node ingests an edge-update stream into per-vertex sketches
// and answers connected-components queries during and at the end of it.
//
// The pipeline is package ingest's (readers, gutters, delta workers; with
// --readers N > 1, N goroutines read disjoint blocks of a binary stream
// file), the queries package cc's (the query schedule, the greedy
// shortcut, Boruvka's algorithm over the sketches); ingestion resumes
// after each query. With --listen the main node starts a memberlist
// cluster that worker processes (cmd/worker) join and ships batches to
// them (package distributor, which merges each delta exactly once);
// --local-workers 0 leaves all delta work to them while any is connected.
// With --checkpoint-dir it saves its state every --checkpoint-every and on
// SIGTERM or SIGINT (package checkpoint), and --resume continues such a
// run on the same stream after checking its first updates. Before
// allocating, ingest's memory plan refuses a stream whose slabs or fill
// estimate exceed the machine's memory and swap. This command holds the
// flags, the output formats and the files.
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
// as its V isolated vertices.
//
// stdout gets a short human summary, or with --json exactly one JSON
// object; stderr gets logs and, when it is a terminal, a progress bar.
// Exit status: 0 on success, 1 on a runtime or input error, 2 on a usage
// error. The first Ctrl-C (or SIGTERM) stops ingestion and prints no
// answer, after writing a checkpoint with --checkpoint-dir; a second one
// kills the process.
package main
