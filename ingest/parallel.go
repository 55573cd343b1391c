package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"sketchcc/gutters"
	"sketchcc/stream"
)

// blockRecords is the most records a reader claims at a time: 9 MiB of
// stream, many reads long, so that claiming costs nothing, and short
// enough that the readers finish a segment together. A short segment is
// cut into at least four blocks per reader, of at least minBlockRecords.
const (
	blockRecords    = 1 << 20
	minBlockRecords = 64
)

// A chunk is the (vertex, neighbour) pairs a reader collects for one
// inserter before handing them over. Its length is chunkPairsPerVertex
// pairs per vertex of the inserter's Part, so that each gutter's tail line
// takes several appends while it is in the cache (at 2^15 vertices and 8
// Parts, 8 Ki pairs gave 2 each and a median insert stage of 25 ns per
// update on kron15; 64 Ki pairs, 22, on an AMD EPYC family 26 model 2;
// results/perf-notes.md), within [minChunkPairs, maxChunkPairs], and
// short enough that all chunks together stay under chunkPoolBytes.
const (
	chunkPairsPerVertex = 16
	minChunkPairs       = 8 << 10
	maxChunkPairs       = 64 << 10
	chunkPoolBytes      = 64 << 20
)

// chunkPairs returns the chunk length for a pool of chunks chunks over
// parts Parts of the given vertex count.
func chunkPairs(vertices uint32, parts, chunks int) int {
	per := min(uint64(chunkPairsPerVertex)*uint64(vertices)/uint64(parts), maxChunkPairs)
	n := min(int(per), chunkPoolBytes/(8*chunks))
	return min(max(n, minChunkPairs), maxChunkPairs)
}

// hashPieceRecords is the number of records the sorter takes before they
// are hashed: 18 KiB, in the L1 cache still.
const hashPieceRecords = 2048

// pair is a neighbour id bound for a vertex's gutter: {vertex, neighbour}.
type pair = [2]uint32

// fanout is the parallel pipeline of one Engine: Readers goroutines read
// disjoint blocks of the stream and sort each update's two pairs by the
// gutters' Part that owns the vertex; one inserter goroutine per Part
// appends them. No stage runs on one goroutine only. The goroutines live
// for one ingestParallel call, which is a barrier: when it returns, every
// pair read is in the gutters.
type fanout struct {
	parts []*gutters.Part
	pool  chan []pair // empty pair chunks
	chunk int         // pairs in a chunk (chunkPairs)
}

func newFanout(g *gutters.Gutters, readers int) (*fanout, error) {
	parts, err := g.Parts(readers)
	if err != nil {
		return nil, err
	}
	// Each reader holds a chunk per Part, each inserter one, and each
	// inserter's queue holds up to inserterQueue.
	n := readers*len(parts) + len(parts)*(inserterQueue+1)
	f := &fanout{parts: parts, pool: make(chan []pair, n), chunk: chunkPairs(g.Config().Vertices, len(parts), n)}
	for range n {
		f.pool <- make([]pair, 0, f.chunk)
	}
	return f, nil
}

// inserterQueue is the number of chunks queued for one inserter.
const inserterQueue = 4

// readErr is a reader's error and the index of the record where it
// happened, so that the first one in stream order is reported.
type readErr struct {
	at  uint64
	err error
}

// piece is the digest of the records one block's reader took, from lo on.
type piece struct {
	lo uint64
	d  stream.Digest
}

// segment is what the readers of one ingestParallel call share.
type segment struct {
	lo    uint64        // first record; blocks start at multiples of the block size
	claim atomic.Uint64 // next block's first record (the first one may be below lo)
	stop  atomic.Uint64 // no block starting here or later is read
	mu    struct {
		sync.Mutex
		first  *readErr // the first error in stream order
		pieces []piece  // one a block, in the order the blocks ended
	}
}

// fail records err at record at, keeping the first one in stream order,
// and lowers stop to at. Safe for concurrent use.
func (s *segment) fail(at uint64, err error) {
	s.mu.Lock()
	if s.mu.first == nil || at < s.mu.first.at {
		s.mu.first = &readErr{at, err}
	}
	s.mu.Unlock()
	for st := s.stop.Load(); at < st && !s.stop.CompareAndSwap(st, at); st = s.stop.Load() {
	}
}

// took records the digest of the records a block's reader took, from lo
// on. Safe for concurrent use; called once a block (a few a second).
func (s *segment) took(lo uint64, d stream.Digest) {
	s.mu.Lock()
	s.mu.pieces = append(s.mu.pieces, piece{lo, d})
	s.mu.Unlock()
}

// digest returns the digest of records [lo, hi) from the pieces, and
// false when they do not tile the range exactly. Called after the readers
// are done.
func (s *segment) digest(lo, hi uint64) (stream.Digest, bool) {
	ps := s.mu.pieces
	slices.SortFunc(ps, func(a, b piece) int { return cmp.Compare(a.lo, b.lo) })
	var d stream.Digest
	for _, p := range ps {
		if p.lo != lo+d.Records {
			return d, false
		}
		d = d.Append(p.d)
	}
	return d, lo+d.Records == hi
}

// ingestParallel reads records [cur.Pos(), cur.Pos()+n) of cur's file with
// Config.Readers goroutines and inserts them, then moves cur past them,
// with their digest: each block's reader hashes the records it took, and
// the blocks' digests are appended in stream order. When ctx is done the
// readers claim no new block but read the ones they hold to their end, so
// that the records inserted are exactly [Pos, Pos+k): it returns ctx's
// cause and k, and cur is moved past them with their digest, so that a
// checkpoint can be taken there. On a bad record it returns the error of
// the first one in stream order and the number of records before it
// (records after it that other readers reached are in the gutters too),
// and cur's digest is unknown.
func (e *Engine) ingestParallel(ctx context.Context, cur *stream.Cursor, n uint64) (uint64, error) {
	f := e.fan
	lo := cur.Pos()
	hi := lo + min(n, cur.Header().Updates-lo)
	// The readers count into e.updates as they go, for a progress bar.
	before := e.updates.Load()
	block := min(blockRecords, max(minBlockRecords, (hi-lo)/uint64(4*e.cfg.Readers)))
	// A packed stream's blocks are read whole: blocks of records that
	// start at multiples of theirs read each one once (the first block
	// claimed starts at lo, the rest at multiples of block).
	if r := cur.File().BlockRecords(); r > 1 {
		block = (block + r - 1) / r * r
	}
	seg := segment{lo: lo}
	seg.claim.Store(lo - lo%block)
	seg.stop.Store(hi)
	queues := make([]chan []pair, len(f.parts))
	var inserters sync.WaitGroup
	for i, p := range f.parts {
		q := make(chan []pair, inserterQueue)
		queues[i] = q
		inserters.Go(func() {
			pprof.Do(ctx, pprof.Labels("stage", "insert", "goroutine", "insert-"+strconv.Itoa(i)), func(context.Context) {
				for c := range q {
					p.Insert(c)
					f.pool <- c[:0]
				}
			})
		})
	}
	var readers sync.WaitGroup
	for i := range e.cfg.Readers {
		readers.Go(func() {
			pprof.Do(ctx, pprof.Labels("stage", "read", "goroutine", "read-"+strconv.Itoa(i)), func(context.Context) {
				e.readBlocks(ctx, cur.File(), block, &seg, queues, &e.updates)
			})
		})
	}
	readers.Wait()
	for _, q := range queues {
		close(q)
	}
	inserters.Wait()
	k := e.updates.Load() - before
	if first := seg.mu.first; first != nil {
		// Read resumes at the bad record and meets the error again.
		_ = cur.Seek(first.at)
		return first.at - lo, first.err
	}
	if d, ok := seg.digest(lo, lo+k); ok {
		_ = cur.Skip(d)
	} else {
		// Not reached: every block claimed was read to its end. Without
		// a digest no checkpoint is written, rather than one that cannot
		// be checked.
		_ = cur.Seek(lo + k)
	}
	if k < hi-lo {
		return k, context.Cause(ctx)
	}
	return k, nil
}

// readBlocks claims blocks of records below seg's stop, reads them and
// hands each update's two pairs to the inserters of the Parts owning
// their vertices, until no block is left or ctx is done, and reports the
// digest of what it took from each block to seg. A block claimed is read
// to its end even when ctx is done meanwhile (at most blockRecords, some
// milliseconds), so that a stopped segment holds a prefix. It reports a
// bad record to seg.fail, which lowers stop to it, so that blocks before
// the first error in stream order are still read and blocks after it are
// not.
func (e *Engine) readBlocks(ctx context.Context, file *stream.File, block uint64, seg *segment,
	queues []chan []pair, inserted *atomic.Uint64) {
	f := e.fan
	so := newSorter(len(f.parts), f.chunk, queues, f.pool)
	vertices := file.Header().Vertices
	raw := make([]byte, readChunk*stream.RecordBytes*8)
	for ctx.Err() == nil {
		blo := seg.claim.Add(block) - block
		if blo >= seg.stop.Load() {
			break
		}
		bhi := min(blo+block, seg.stop.Load())
		blo = max(blo, seg.lo)
		r := file.ReaderBuf(blo, bhi, raw)
		at := blo
		var d stream.Digest // of the records the sorter took, [blo, at)
		for at < bhi {
			recs, first, err := r.ReadRaw()
			k := 0
			for k < len(recs)/stream.RecordBytes {
				// By pieces small enough to be still in the L1 cache
				// when the sorter is done with them and they are hashed.
				p := recs[k*stream.RecordBytes : min(len(recs), (k+hashPieceRecords)*stream.RecordBytes)]
				j := so.add(p, vertices)
				d = d.Update(p[:j*stream.RecordBytes])
				if k += j; j*stream.RecordBytes < len(p) {
					break
				}
			}
			at += uint64(k)
			inserted.Add(uint64(k))
			if n := uint64(len(recs) / stream.RecordBytes); uint64(k) < n {
				i := first + uint64(k)
				seg.fail(i, r.BadRecord(i, recs[k*stream.RecordBytes:(k+1)*stream.RecordBytes]))
				break
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				var fe *stream.FormatError
				if errors.As(err, &fe) && fe.Index >= 0 {
					seg.fail(uint64(fe.Index), err)
				} else {
					seg.fail(at, err)
				}
				break
			}
		}
		seg.took(blo, d)
		if at < bhi && seg.stop.Load() > at {
			// The block ended early without an error: the file is
			// shorter than its header says.
			seg.fail(at, fmt.Errorf("ingest: stream ended at update %d, inside a block [%d, %d)", at, blo, bhi))
		}
	}
	so.close()
}

// sorter collects a reader's pairs into one chunk per Part and hands a
// full chunk to that Part's inserter. One reader owns it.
type sorter struct {
	chunks [][]pair // by Part: chunk long
	chunk  int      // pairs in a chunk (chunkPairs)
	fill   []int    // by Part: pairs in the chunk
	queues []chan []pair
	pool   chan []pair
}

func newSorter(parts, chunk int, queues []chan []pair, pool chan []pair) *sorter {
	s := &sorter{chunks: make([][]pair, parts), chunk: chunk, fill: make([]int, parts), queues: queues, pool: pool}
	for i := range s.chunks {
		s.chunks[i] = (<-pool)[:chunk]
	}
	return s
}

// add sorts the two pairs of each record of recs (whole records of a
// stream of the given vertex count) by Part, up to the first record that
// fails the stream's checks, and returns the number of records taken.
// Decoding here, rather than through stream.Reader.Read, writes each
// update once, as its two pairs.
func (s *sorter) add(recs []byte, vertices uint32) int {
	n := len(s.chunks)
	chunks, fill, chunk := s.chunks, s.fill[:n], s.chunk
	k := len(recs) / stream.RecordBytes
	for j := range k {
		src, dst, ok := stream.DecodeRecord(recs[j*stream.RecordBytes:(j+1)*stream.RecordBytes], vertices)
		if !ok {
			return j
		}
		i := gutters.PartOf(src, n)
		c := fill[i]
		chunks[i][c] = pair{src, dst}
		fill[i] = c + 1
		if c+1 == chunk {
			s.handOver(i)
		}
		i = gutters.PartOf(dst, n)
		c = fill[i]
		chunks[i][c] = pair{dst, src}
		fill[i] = c + 1
		if c+1 == chunk {
			s.handOver(i)
		}
	}
	return k
}

// handOver queues Part i's full chunk and takes an empty one.
//
//go:noinline
func (s *sorter) handOver(i int) {
	s.queues[i] <- s.chunks[i][:s.fill[i]]
	s.chunks[i], s.fill[i] = (<-s.pool)[:s.chunk], 0
}

// close hands over the partial chunks and returns the empty ones.
func (s *sorter) close() {
	for i, c := range s.chunks {
		if s.fill[i] > 0 {
			s.queues[i] <- c[:s.fill[i]]
		} else {
			s.pool <- c[:0]
		}
	}
}
