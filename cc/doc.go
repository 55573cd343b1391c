// Package cc is the main node's query room: it answers connected-components
// queries over the sketch store, alone among the packages that read the
// sketches for an answer.
//
//   - Room keeps the greedy shortcut's sets and spanning forest current
//     with every update it reads for the pipeline (IngestN), on a
//     goroutine of its own beside the pipeline's readers when the source
//     is a binary stream file. Query answers from the sets when no forest
//     edge was deleted since the last answer, and otherwise runs Boruvka
//     over the re-opened sets only, adding the gutters' buffered updates
//     of the vertices it reads (the pipeline's Settle view); without the
//     shortcut it flushes the pipeline and runs Boruvka over every
//     vertex. Boruvka merges and samples each round's supernodes on
//     several goroutines that it starts and waits for.
//   - Room.Run is the query schedule: it reads the stream in segments that
//     end at the query positions, queries at each barrier, and bounds
//     every flush by Config.FlushTimeout. With Schedule.Checkpoint it also
//     stops at a barrier every Schedule.CheckpointEvery (Room.Barrier: a
//     flush without a query) and hands the Room's State to the caller to
//     save; Room.Restore and Schedule.From continue from a saved State.
//
// Queries do not modify the sketches; ingestion resumes after each one.
// A Room is not safe for concurrent use: one goroutine reads the stream
// and queries (IngestN starts and waits for the greedy goroutine).
package cc
