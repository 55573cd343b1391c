// Package streamgen builds dynamic edge-update streams: synthetic ones
// (Kronecker and Erdős–Rényi graphs turned into streams with deletions) and
// streams made from real data (a series of snapshots of one graph, or
// timestamped events with an expiry window). Every stream it writes is well
// formed: it inserts only absent edges and deletes only present ones.
//
// # Synthetic streams
//
// A generator decides, for every unordered vertex pair {a, b} on its own,
// with counter-based hashes of (seed, a, b):
//
//   - whether the pair is an edge of the final graph (probability q(a, b):
//     the Kronecker Poisson model or a constant density);
//   - for an edge, in how many of Rounds rounds it is deleted and
//     re-inserted (probability Churn each): it then has 1 + 2k updates,
//     insert, delete, insert, ..., ending inserted;
//   - for a non-edge, in how many rounds it is inserted and deleted again
//     (a transient pair): 2j updates, ending deleted;
//   - a random time for each of its updates, sorted, so that its own updates
//     keep their insert/delete order while the updates of all pairs
//     interleave at random.
//
// The stream lists all updates in time order. Because each pair's fate is a
// pure function of the seed and the pair, the generator never holds the
// edge set: it scans the pairs several times instead. One counting pass
// finds the number of updates (for the header), the final edges' union-find
// and the number of updates in each time slice; one pass writes the
// cumulative ground-truth file; then each window pass collects the updates
// of a range of time slices that fits in memory (Config.PassUpdates),
// sorts them and appends them to the stream. Memory is therefore bounded by
// PassUpdates·8 bytes plus O(V) per worker, whatever the number of edges,
// and the output does not depend on the number of workers.
//
// A sparse Erdős–Rényi graph (a pair has an update with chance q below
// 1/64) is not scanned pair by pair: each row a's pairs (a, b), b > a,
// with an update are found by geometric skips from a generator seeded by
// (seed, a), which also draws each such pair's fate from the dense
// model's distribution given that it has an update; its times are the
// dense model's. A pass then costs time in proportion to the pairs with
// updates, not to V², and the output is still a pure function of the seed
// (but not the same stream as the dense scan would write).
//
// A record in memory is one uint64: time << (2·b+1) | Src << (b+1) |
// Dst << 1 | type, where b is the number of bits of a vertex id; sorting
// records sorts by time. Two updates of one pair never share a time.
// Updates of different pairs that share a time are ordered by their
// (permuted) labels.
//
// # Streams from data
//
// Snapshots turns a series of graphs over one vertex set into the inserts
// of the first followed by the exact differences between consecutive ones.
// Temporal turns timestamped events into a stream in which an edge lives
// from its first event until Window time units pass without an event on it.
//
// The functions here are single-goroutine except the synthetic generators,
// which run Config.Workers goroutines and wait for all of them before they
// return.
package streamgen
