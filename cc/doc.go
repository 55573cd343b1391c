// Package cc is the main node's query room: it answers connected-components
// queries over the sketch store, alone among the packages that read the
// sketches for an answer.
//
//   - SpanningForest runs Boruvka's algorithm over a sketch table, merging
//     and sampling each round's supernodes on several goroutines that it
//     starts and waits for.
//   - Room keeps the greedy shortcut's DSU current with every update it
//     reads for the pipeline (IngestN) and answers Query from it while it
//     is valid; otherwise it flushes the pipeline and runs Boruvka.
//   - Room.Run is the query schedule: it reads the stream in segments that
//     end at the query positions, queries at each barrier, and bounds
//     every flush by Config.FlushTimeout. With Schedule.Checkpoint it also
//     stops at a barrier every Schedule.CheckpointEvery (Room.Barrier: a
//     flush without a query) and hands the Room's State to the caller to
//     save; Room.Restore and Schedule.From continue from a saved State.
//
// Queries do not modify the sketches; ingestion resumes after each one.
// A Room is not safe for concurrent use: one goroutine reads the stream
// and queries.
package cc
