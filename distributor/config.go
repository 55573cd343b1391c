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
	// DialTimeout bounds connecting to a worker. Zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// HandshakeTimeout bounds the handshake that follows. Zero means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// AnswerTimeout is each batch's deadline: a batch that a worker has
	// not answered AnswerTimeout after it was sent is sketched on the
	// main node (a late answer is then dropped), whatever else the
	// connection carries meanwhile. A worker that holds batches and sends
	// no byte for AnswerTimeout loses its connection, as does one that
	// takes no byte of a frame for that long; a slow worker that keeps
	// sending is not cut. Zero means DefaultAnswerTimeout.
	AnswerTimeout time.Duration
	// RedialBackoff is the longest wait between attempts to re-dial a
	// worker that is still a member of the cluster after its connection
	// dropped or could not be made: the first attempt comes after
	// 100 ms, each next one waits twice as long, up to RedialBackoff.
	// Zero means DefaultRedialBackoff.
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

// PoolReserveBytes returns the memory, in bytes, that a main node keeps
// out of its sketch budget for a Pool with configuration c
// (ingest.Config.ReserveBytes), for workers workers (at least two are
// assumed: more may join later), or 0 when listen is false: per worker, a
// frame of batches being encoded and one of deltas being read (FrameBytes
// each) and Credits batches in flight (4 KiB each, a batch of about 1,000
// ids); and 8 MiB for memberlist, the connections' goroutines and the
// code they run. Measured on kron15 with two workers on loopback and the
// main node under a memory cgroup of half its sketch bytes: with no
// reserve it thrashed (page faults) from its first seconds; with 10 MiB it
// ran, exact.
func PoolReserveBytes(listen bool, workers int, c Config) int64 {
	if !listen {
		return 0
	}
	c.ensureDefaults()
	perWorker := 2*int64(c.FrameBytes) + int64(c.Credits)<<12
	return 8<<20 + int64(max(workers, 2))*perWorker
}

// The defaults of the timeouts of Config and WorkerConfig (both have a
// HandshakeTimeout).
const (
	DefaultDialTimeout      = 10 * time.Second
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultAnswerTimeout    = 30 * time.Second
	DefaultRedialBackoff    = 5 * time.Second
	DefaultWriteTimeout     = 30 * time.Second
	DefaultShutdownTimeout  = time.Second
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
		c.DialTimeout = DefaultDialTimeout
	}
	if c.AnswerTimeout == 0 {
		c.AnswerTimeout = DefaultAnswerTimeout
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.RedialBackoff == 0 {
		c.RedialBackoff = DefaultRedialBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// FieldError reports a Config field whose value is out of range.
// Validate and ValidateExplicit return one per problem, joined by
// errors.Join, so that a command can name the field in its own terms (a
// flag).
type FieldError struct {
	// Field is the field's Go name, for example "Credits".
	Field string
	// Value is the value found.
	Value any
	// Want states the values allowed, for example "> 0".
	Want string
}

// Problem returns the field, the value found and the values allowed, so
// that a command can spell the field as its own setting.
func (e *FieldError) Problem() (field string, value any, want string) {
	return e.Field, e.Value, e.Want
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("distributor: %s = %v, want %s", e.Field, e.Value, e.Want)
}

// Validate reports every problem with c at once, each problem of a
// number a *FieldError; a zero field stands for its default.
func (c Config) Validate() error { return c.check(false) }

// ValidateExplicit is Validate for a Config whose Credits, FlushDelay
// and timeouts were set explicitly, where a zero is a value rather than
// "unset" (a command's flags): they must then be positive. The other
// fields keep zero as their default.
func (c Config) ValidateExplicit() error { return c.check(true) }

func (c Config) check(explicit bool) error {
	var errs []error
	bad := func(field string, v any, want string) { errs = append(errs, &FieldError{field, v, want}) }
	if c.Credits < 0 || c.Credits > MaxCredits || explicit && c.Credits == 0 {
		bad("Credits", c.Credits, fmt.Sprintf("[1, %d]", MaxCredits))
	}
	if c.FrameBytes < 0 {
		bad("FrameBytes", c.FrameBytes, "> 0")
	}
	if c.MaxFrameBytes < 0 || int64(c.MaxFrameBytes) > 1<<31 {
		bad("MaxFrameBytes", c.MaxFrameBytes, "[1, 2^31]")
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"FlushDelay", c.FlushDelay}, {"AnswerTimeout", c.AnswerTimeout}, {"DialTimeout", c.DialTimeout},
		{"HandshakeTimeout", c.HandshakeTimeout}, {"RedialBackoff", c.RedialBackoff}} {
		if d.v < 0 || explicit && d.v == 0 {
			bad(d.field, d.v, "> 0")
		}
	}
	if err := checkKey(c.Key); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
