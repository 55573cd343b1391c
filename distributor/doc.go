// Package distributor ships batches from the main node to worker processes
// and merges the deltas they return, exactly once, over one TCP connection
// per worker; membership (who is a worker, at which address) comes from
// hashicorp/memberlist.
//
// # Roles
//
//   - Pool, on the main node, has three parts: the roster (roster.go), a
//     plain value that decides whom to connect to and when to re-dial,
//     fed membership news and connection ends and returning actions
//     (TestRosterScripts runs it from testdata/roster without a socket);
//     the data plane (plane.go); and the connections (distributor.go,
//     with their writer in ship.go and their reader in merge.go).
//     Pool's doc comment gives the stop order. It owns one work
//     distributor per connected worker, and encoder goroutines (two, more on many cores) that take
//     batches from the gutters' Batches while a worker is connected and
//     encode them. Each distributor has one connection, one writer goroutine
//     (takes encoded batches, or batches from the retry queue, while it has
//     credits, and coalesces them into frames) and one reader goroutine
//     (merges deltas). Encoding apart from the writers keeps every
//     goroutine's share of the main node's CPU small: 2–3 ns per stream
//     update on kron15 with two workers, against 4–5.6 for a writer that
//     encoded its own batches (AMD EPYC family 26 model 2; see
//     results/perf-notes.md). The local delta workers of
//     package ingest take from the gutters' channel too, so local and
//     remote work balance by themselves.
//     A fallback goroutine sketches batches on the main node while no
//     worker is connected, so a run never waits for workers that are not
//     there.
//   - Worker serves main-node connections: per connection one reader, a
//     pool of Threads goroutines computing sketch.Params.Delta, one writer.
//     It keeps no state between batches.
//   - Membership wraps memberlist. A worker advertises its data-plane
//     address in its node metadata (NodeMeta, msgpack, a few dozen of
//     memberlist's 512 bytes), with its name and its incarnation (the
//     process's start time): memberlist knows each process as
//     name#incarnation, so a worker restarted under its old name joins
//     at once, and the Pool replaces the older incarnation's connection
//     and ignores later news of the old process. A member that leaves
//     first advertises Leaving, so a departure (Left) and a failure
//     (Failed) are reported apart. Pool.Follow connects to every worker
//     that joins and drops the connection of every worker that leaves or
//     is declared dead. memberlist's ChannelEventDelegate blocks its callback
//     when its channel is full; a goroutine of Membership drains it into
//     Events at once, and the Pool's goroutine handles an event without
//     blocking (connections are made by the distributor's own goroutine).
//   - Cluster is the main node's side (Membership, Pool, the interrupt
//     watch and the stop order); Worker.Attend the worker's (serve, join,
//     watch the main node, rejoin, leave).
//
// # Connection
//
// The main node dials the worker's advertised address. Each side sends,
// raw, the 16 bytes "sketchcc-batch/6"; a peer that sends anything else is
// dropped ("not a sketchcc peer", or "peer speaks sketchcc-batch/3" for
// another version). The two sides take turns, so the handshake also runs
// over unbuffered pipes:
//
//	main node                                    worker
//	"sketchcc-batch/6", hello{name, Nm}  ─────▶
//	                                     ◀─────  "sketchcc-batch/6", hello{name, Nw, MACw}
//	params{V, f, seed, R, S, maxBatch, maxFrameM, MACm} ──▶
//	                                     ◀─────  ready{threads, maxFrameW}  (or error{reason})
//	batches ...                          ─────▶
//	                                     ◀─────  deltas ...
//	stop{reason}                         ─────▶  (the worker exits)
//
// Nm and Nw are 32 random bytes. MACw = HMAC-SHA256(key, version ‖ 0 ‖
// "worker" ‖ 0 ‖ Nm ‖ Nw) and MACm the same with "main" and Nw ‖ Nm, under
// the cluster key (empty without --cluster-key-file; the same key
// encrypts memberlist's gossip). A side whose challenge is answered wrong
// sends error{"authentication failed: …"} and closes: a worker without the
// key gets no batch, a main node without it gets no delta. The worker
// rebuilds the sketch parameters with sketch.NewParams (and, for a column
// count k times its own, sketch.Params.WithSets(k): a main node keeping k
// sketch sets for k-connectivity; a batch's delta then covers every set)
// and refuses them (error{…}) if its build computes another geometry. maxFrameM and
// maxFrameW are the largest frame payloads each side reads
// (--max-frame-bytes): each side keeps its frames within the other's, and
// a limit that cannot hold one batch (its largest encoding, 1 + 5 ·
// maxBatch bytes) or one delta is
// refused with error{"… raise --max-frame-bytes on the worker to at least
// N"}, logged on both sides. Before the handshake
// is over a header may not exceed 1 KiB and a payload must be empty, so a
// stranger cannot make either side allocate.
//
// # Frames
//
//	type uint8 | header bytes uint32 | payload bytes uint32 | header | payload | trailer
//
// The prefix is little-endian. Every frame after the handshake (after ready, both ways)
// carries a trailer that seals it (seal.go): under a cluster key, the
// 16-byte tag of AES-128-GCM, whose additional data is the prefix and the
// header and whose plaintext is the payload, which then travels
// encrypted; the key is HMAC-SHA256(cluster key, version ‖ 0 ‖ "frames
// from main" (or "worker") ‖ 0 ‖ Nm ‖ Nw), one per direction and
// connection, and the nonce is the frame's number in its direction,
// counted by both sides and never sent. So a frame changed, injected,
// replayed, dropped or moved fails, and no frame of one connection or
// direction passes on another. Without a key the trailer is a CRC-32C
// (Castagnoli) of the prefix, the header and the payload: it catches
// corruption, not an attacker. The handshake's frames have no trailer
// (its challenge authenticates it). A reader checks a frame before it
// uses any of it, the header included; a frame that fails is an
// ErrIntegrity *ProtocolError, counted (ConnStats.BadFrames,
// ServeStats.BadFrames): the connection is dropped like a broken link
// and its batches are sent again (FuzzSealedFrames,
// TestSealCatchesEveryBitFlip).
//
// The header is msgpack, written and read with msgpack's primitive
// calls, all in codec.go behind encode/decode; every list and byte-string
// length in it is checked against a limit and against the
// bytes left before anything is allocated. The payload is compact
// binary, coded in wire.go:
//
//	batches  header [[id, vertex, updates, bytes], ...]
//	         payload: per batch, its bytes: form uint8 (0 gaps, 1 bitmap), then
//	           gaps:   uvarint first id, uvarint (id − previous id − 1) for each next one
//	           bitmap: uvarint byte index b, then bit j of byte i marks id 8·(b+i)+j
//	deltas   header [id, ...]
//	         payload: per id, uvarint vertex | det uint8 | S × uvarint row bitmap |
//	                  the non-zero buckets, 16 bytes each (Alpha, Gamma uint64)
//
// A batch carries the neighbour ids that occur an odd number of times in
// it, sorted, as gaps or as a bitmap (the bitmap when it is shorter or
// takes at most two bytes per id): the sketch is linear over
// GF(2), so a pair of equal ids cancels and the worker's delta is the
// same, bucket for bucket (TestBatchParityDeltaEqual). Its updates count
// those ids, so a batch may carry none. A delta carries, per column, the
// rows whose bucket is not zero, and those buckets: a batch of n ids
// fills about log2(n) rows of each column, out of R.
//
// A frame's lengths are checked before it is read: a header of at most
// 104 KiB, at most 4,096 batches, a payload of at most MaxFrameBytes. A
// batches payload is exactly the sum of its batches' bytes, each of 1 to
// 1 + 5 · updates bytes holding at most 8 ids per byte and at most
// maxBatch ids for a vertex below V, with at most a payload limit's worth
// of ids (× 4 bytes) in the frame; each batch decodes to exactly its
// updates, strictly increasing ids below V other than its vertex. A deltas
// payload holds, per id, one delta of between 2 + S and its largest
// encoded size, each for its batch's vertex, row bitmaps within R rows,
// and nothing after the last. Any violation is a *ProtocolError: the
// connection is dropped and logged, and its batches go elsewhere; nothing
// from the network makes either side panic (FuzzFrameDecoder).
//
// Message types are an append-only list (frame.go):
//
//	1 hello  2 params  3 ready  4 batches  5 deltas  6 stop  7 error  8 goodbye
//
// A worker that shuts down (Worker.Close) answers what it has read, then
// sends goodbye{}: it leaves, and the main node sends its unanswered
// batches elsewhere without counting a failure.
//
// A change to an existing message's layout needs a new version string.
//
// # Flow control
//
//   - Coalescing: the writer puts several batches in one frame (encoded
//     into one buffer, one writev) and sends it when their neighbour ids
//     reach FrameBytes at 4 bytes each, when it has no credit left, or FlushDelay after
//     its first batch, so latency stays bounded when the stream is slow.
//     The worker sends its deltas when no batch it has read is still being
//     sketched, at FrameBytes, or FlushDelay after the first.
//   - Credits: a distributor has at most Credits batches sent and not
//     answered; it takes no batch from the engine without a credit. When
//     every distributor is out of credits nobody takes from Batches,
//     the gutters' queue fills and the stream reader blocks: the
//     back-pressure reaches the reader, and the main node holds at most
//     Credits batches per worker.
//   - Timeouts: each batch must be answered within AnswerTimeout of the
//     write of its frame, or it is sketched on the main node (its late
//     delta is then dropped as unknown) and its credit given back, while
//     the connection goes on. A worker that holds batches and sends no
//     byte for AnswerTimeout, or takes no byte of a frame for that long,
//     loses its connection; one whose bytes keep coming is not cut. A
//     connection that drops while its worker is still a member is
//     dialled again after 100 ms, then twice as long each time, up to
//     RedialBackoff; not after a refusal, a stop or a goodbye. A query's
//     flush has its own deadline (main-node --flush-timeout); when it
//     passes, Pool.Late names each worker that still holds batches.
//   - Local cutoff: a batch of fewer than LocalCutoff updates is sketched on
//     the main node, where that costs less than shipping it
//     (BenchmarkLocalCutoff).
//
// # Exactly once
//
// A delta XORed twice cancels itself, so every batch must be applied
// exactly once. The sketch store enforces it: every batch carries a store
// ticket, and the store refuses a second Apply or Merge of one ticket
// (package store; MergeWith). The Pool makes sure it never asks: when a distributor
// takes a batch it copies the neighbours into a pending batch whose id is
// the ticket and releases the gutter buffer. From then on the pending batch is in exactly one
// place: the distributor's pending map (entered under its mutex before the
// frame is written, unless the connection has already failed), the retry
// queue, or a goroutine applying it on the main node.
//
//   - At most once: the reader merges a delta only after deleting its id
//     from the pending map under the mutex; an id that is not there
//     (answered already, re-sent elsewhere, never sent on this connection)
//     is dropped and counted as a duplicate. When a connection fails, fail
//     marks the distributor dead and empties the map under the same mutex,
//     so no delta of that connection can be merged afterwards, and each
//     batch it moved is merged by whoever takes it next, once.
//   - At least once: a pending batch leaves the map only to be merged, or
//     moved by fail to the retry queue (or, if that is full, applied on
//     the main node). Other distributors, or the fallback goroutine when
//     none is connected, take from the retry queue. Pool.Close applies what
//     is left there. A flush waits (store.Store.Wait) until every ticket
//     issued before it is retired, so a query starts only when every
//     batch handed out before it has been merged.
//
// TestPoolConnectionCutMidBatch, TestPoolDropsDuplicateDeltas and the e2e
// SIGKILL test compare the result with a single-machine run.
//
// # Locks
//
// Lock order: Pool.mu before distributor.mu. Neither is held while calling
// the store (Merge, Apply take its ledger lock and per-vertex locks) or
// the network, except that SetReadDeadline, which does not block, is
// called under distributor.mu. workerStats.mu guards one string and is
// taken under Pool.mu by Stats.
package distributor
