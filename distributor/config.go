package distributor

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Config configures a Pool. A zero field takes its default.
type Config struct {
	// Name is the main node's name in the handshake.
	Name string
	// Key is the cluster key that the handshake authenticates with; nil
	// means none. 16, 24 or 32 bytes.
	Key []byte
	// Credits is the number of batches in flight to one worker: sent and
	// not yet answered by a delta. It bounds the main node's memory per
	// worker (Credits · batch bytes) and, with the gutters' queue, makes
	// back-pressure reach the stream reader. At most MaxCredits; zero means
	// DefaultCredits.
	Credits int
	// FrameBytes is the batch payload at which a frame is sent at once, in
	// bytes. Zero means 512 KiB.
	FrameBytes int
	// FlushDelay is the longest a batch waits for others to share its
	// frame. Zero means DefaultFlushDelay.
	FlushDelay time.Duration
	// LocalCutoff is the batch size, in updates (neighbour ids), under
	// which a batch is sketched on the main node rather than shipped:
	// shipping it costs more than computing it. Zero means
	// DefaultLocalCutoff; negative means ship every batch.
	LocalCutoff int
	// MaxFrameBytes bounds the payload of a frame read from a worker, in
	// bytes. Zero means DefaultMaxFrameBytes.
	MaxFrameBytes int
	// DialTimeout bounds connecting to a worker. Zero means 10 s.
	DialTimeout time.Duration
	// HandshakeTimeout bounds the handshake that follows. Zero means
	// 10 s.
	HandshakeTimeout time.Duration
	// AnswerTimeout is each batch's deadline: a batch that a worker has
	// not answered AnswerTimeout after it was sent is sketched on the
	// main node (a late answer is then dropped), whatever else the
	// connection carries meanwhile. A worker that holds batches and sends
	// no byte for AnswerTimeout loses its connection, as does one that
	// takes no byte of a frame for that long; a slow worker that keeps
	// sending is not cut. Zero means 30 s.
	AnswerTimeout time.Duration
	// RedialBackoff is the longest wait between attempts to re-dial a
	// worker that is still a member of the cluster after its connection
	// dropped or could not be made: the first attempt comes after
	// 100 ms, each next one waits twice as long, up to RedialBackoff.
	// Zero means 5 s.
	RedialBackoff time.Duration
	// Logger receives worker events; nil discards them.
	Logger *slog.Logger
	// SameHost, when set, is called with the delta threads of the
	// connected workers that run on this machine (see sameHost) each time
	// their sum changes, serialized, from the goroutine of the connection
	// that changed it. A main node can then leave those workers their
	// cores (main-node --cores).
	SameHost func(threads int)
}

// DefaultLocalCutoff is the default LocalCutoff, in updates. On the main
// node a batch costs about 39 ns per update to sketch, and about 1 µs to
// ship and merge back whatever its size (BenchmarkLocalCutoff at the
// kron13 geometry, loopback, 2 cores: op=local 2,489 ns at 64 updates,
// op=ship/wire=loopback 990 ns), plus reading the delta from the socket:
// the two cross between 26 and 40 updates. Landscape's cut-off was 400
// (work_distributor.h), with MPI's higher per-message cost.
const DefaultLocalCutoff = 32

// DefaultCredits and MaxCredits bound Config.Credits.
const (
	DefaultCredits = 64
	MaxCredits     = 1 << 16
)

func (c *Config) ensureDefaults() {
	if c.Credits == 0 {
		c.Credits = DefaultCredits
	}
	if c.FrameBytes == 0 {
		c.FrameBytes = 512 << 10
	}
	if c.FlushDelay == 0 {
		c.FlushDelay = DefaultFlushDelay
	}
	if c.LocalCutoff == 0 {
		c.LocalCutoff = DefaultLocalCutoff
	}
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.AnswerTimeout == 0 {
		c.AnswerTimeout = 30 * time.Second
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.RedialBackoff == 0 {
		c.RedialBackoff = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Credits < 0 || c.Credits > MaxCredits {
		errs = append(errs, fmt.Errorf("distributor: %d credits, need [1, %d]", c.Credits, MaxCredits))
	}
	if c.FrameBytes < 0 {
		errs = append(errs, fmt.Errorf("distributor: FrameBytes %d, need > 0", c.FrameBytes))
	}
	if c.MaxFrameBytes < 0 || int64(c.MaxFrameBytes) > 1<<31 {
		errs = append(errs, fmt.Errorf("distributor: MaxFrameBytes %d, need [1, 2^31]", c.MaxFrameBytes))
	}
	if c.FlushDelay < 0 || c.DialTimeout < 0 || c.AnswerTimeout < 0 || c.HandshakeTimeout < 0 || c.RedialBackoff < 0 {
		errs = append(errs, errors.New("distributor: negative FlushDelay, DialTimeout, HandshakeTimeout, AnswerTimeout or RedialBackoff"))
	}
	if err := checkKey(c.Key); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
