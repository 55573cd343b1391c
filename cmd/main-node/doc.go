// Command main-node ingests an edge-update stream into per-vertex sketches
// and answers connected-components queries during and at the end of it.
//
// The pipeline is package ingest's (readers, gutters, delta workers), the
// queries package cc's (the query schedule, the greedy shortcut, Boruvka
// over the sketches, the k-forest query of --k-connectivity, read by
// package kconn); ingestion resumes after each query. --listen starts a
// memberlist cluster that worker processes (cmd/worker) join (package
// distributor, which merges each delta exactly once); --checkpoint-dir and
// --resume save and continue a run (package checkpoint); --stream - and
// --updates-listen take a live stream, and --query-listen answers
// questions about it (package service). This command holds the flags, the
// output formats and the files; `main-node --help` lists every flag and the
// README gives their defaults.
//
// stdout gets a short human summary, or with --json exactly one JSON
// object; stderr gets logs and, when it is a terminal, a progress bar.
// Exit status: 0 on success, 1 on a runtime or input error, 2 on a usage
// error. The first Ctrl-C (or SIGTERM) stops ingestion and prints no
// answer, after writing a checkpoint with --checkpoint-dir; a second one
// kills the process.
package main
