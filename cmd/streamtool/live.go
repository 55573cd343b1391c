package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/client"
	"sketchcc/stream"
)

// readToken returns the token in path (trimmed), or "" for no path.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

var queryCommand = &command{
	usage: "streamtool query ADDR components|connected U V [U V ...]|forest|status|shutdown",
	about: `Asks the query API of a main node serving a live stream (main-node
--query-listen ADDR) and prints its JSON answer. Every answer names the
stream position it is exact for ("position": updates applied). With
--repeat other than 1 it asks again and again, --interval apart, and
prints a summary instead: requests, errors, latency p50/p99, pairs per
second, the first and last positions.
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var q asking
		fs.StringVar(&q.tokenFile, "token-file", "", "file holding the main node's token")
		fs.BoolVar(&q.labels, "labels", false, "components: every vertex's label too")
		fs.DurationVar(&q.timeout, "timeout", 30*time.Second, "give up on one question after this long")
		fs.IntVar(&q.repeat, "repeat", 1, "ask this many times (0: until the main node stops answering)")
		fs.DurationVar(&q.interval, "interval", 0, "with --repeat: time between the starts of two questions (0: back to back)")
		fs.IntVar(&q.randomPairs, "random-pairs", 0, "connected: ask this many random pairs a request instead of U V arguments")
		fs.IntVar(&q.parallel, "parallel", 1, "with --repeat: this many clients asking at once, each --repeat times")
		fs.BoolVar(&q.binary, "binary", false, "connected: send the pairs and take the answer in the API's binary encoding (client.ConnectedBatch), not JSON")
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			if fs.NArg() < 2 {
				return usagef("want ADDR and a question")
			}
			token, err := readToken(q.tokenFile)
			if err != nil {
				return err
			}
			// One kept-alive connection per parallel client.
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxIdleConnsPerHost = max(2, q.parallel)
			q.c = client.New(fs.Arg(0), token, &http.Client{Transport: tr})
			if q.ask, err = q.question(ctx, fs.Arg(1), fs.Args()[2:]); err != nil {
				return err
			}
			if q.repeat == 1 {
				out, _, err := q.once(ctx)
				if err != nil {
					return err
				}
				return e.printJSON(out)
			}
			return e.printJSON(q.loop(ctx))
		}
	},
}

// asking is one streamtool query run.
type asking struct {
	tokenFile           string
	labels              bool
	timeout, interval   time.Duration
	repeat, randomPairs int
	parallel            int
	binary              bool
	c                   *client.Client
	ask                 func(ctx context.Context) (any, uint64, int, error) // answer, position, pairs
	vertices            uint32                                              // connected --random-pairs: the stream's
}

// question returns the function that asks q with args.
func (a *asking) question(ctx context.Context, q string, args []string) (func(context.Context) (any, uint64, int, error), error) {
	switch {
	case q == "components" && len(args) == 0:
		return func(ctx context.Context) (any, uint64, int, error) {
			r, err := a.c.Components(ctx, a.labels)
			return r, r.Position, 0, err
		}, nil
	case q == "connected" && a.randomPairs > 0 && len(args) == 0:
		st, err := a.c.Status(ctx)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, uint64, int, error) {
			pairs := make([][2]uint32, a.randomPairs)
			for i := range pairs {
				pairs[i] = [2]uint32{rand.Uint32N(st.Vertices), rand.Uint32N(st.Vertices)}
			}
			r, err := a.connected(ctx, pairs)
			return r, r.Position, len(pairs), err
		}, nil
	case q == "connected":
		pairs, err := parsePairs(args)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, uint64, int, error) {
			r, err := a.connected(ctx, pairs)
			return r, r.Position, len(pairs), err
		}, nil
	case q == "forest" && len(args) == 0:
		return func(ctx context.Context) (any, uint64, int, error) {
			r, err := a.c.Forest(ctx)
			return r, r.Position, 0, err
		}, nil
	case q == "status" && len(args) == 0:
		return func(ctx context.Context) (any, uint64, int, error) {
			r, err := a.c.Status(ctx)
			return r, r.LastPosition, 0, err
		}, nil
	case q == "shutdown" && len(args) == 0:
		return func(ctx context.Context) (any, uint64, int, error) {
			err := a.c.Shutdown(ctx)
			return map[string]bool{"stopping": err == nil}, 0, 0, err
		}, nil
	}
	return nil, usagef("unknown question %q %q", q, args)
}

// connected asks whether pairs are connected, in JSON or, with --binary,
// in the binary encoding.
func (a *asking) connected(ctx context.Context, pairs [][2]uint32) (*client.Connected, error) {
	if a.binary {
		r, err := a.c.ConnectedBatch(ctx, pairs)
		if r == nil {
			r = new(client.Connected)
		}
		return r, err
	}
	return a.c.Connected(ctx, pairs)
}

// once asks the question once within the timeout.
func (a *asking) once(ctx context.Context) (any, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	out, pos, _, err := a.ask(ctx)
	return out, pos, err
}

// loopSummary is what a repeated query measured.
type loopSummary struct {
	Requests       int     `json:"requests"`
	Errors         int     `json:"errors"`
	LastError      string  `json:"last_error,omitempty"`
	Seconds        float64 `json:"seconds"`
	P50Ms          float64 `json:"latency_p50_ms"`
	P99Ms          float64 `json:"latency_p99_ms"`
	Pairs          int     `json:"pairs"`
	PairsPerSecond float64 `json:"pairs_per_second"`
	FirstPosition  uint64  `json:"first_position"`
	LastPosition   uint64  `json:"last_position"`
}

// loop runs a.parallel clients, each asking a.repeat times (0: until
// the server stops answering or ctx ends), and summarises them.
func (a *asking) loop(ctx context.Context) loopSummary {
	var s loopSummary
	var lat []time.Duration
	var mu sync.Mutex
	var wg sync.WaitGroup
	t0 := time.Now()
	for range max(1, a.parallel) {
		wg.Go(func() {
			one, l := a.client(ctx, t0)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, l...)
			s.Requests += one.Requests
			s.Errors += one.Errors
			s.Pairs += one.Pairs
			s.LastError = cmp.Or(one.LastError, s.LastError)
			if s.FirstPosition == 0 || one.FirstPosition < s.FirstPosition {
				s.FirstPosition = one.FirstPosition
			}
			s.LastPosition = max(s.LastPosition, one.LastPosition)
		})
	}
	wg.Wait()
	s.Seconds = time.Since(t0).Seconds()
	s.PairsPerSecond = float64(s.Pairs) / s.Seconds
	if len(lat) > 0 {
		slices.Sort(lat)
		s.P50Ms = float64(lat[len(lat)/2].Microseconds()) / 1e3
		s.P99Ms = float64(lat[len(lat)*99/100].Microseconds()) / 1e3
	}
	return s
}

// client is one client of loop: it asks a.repeat times, a.interval
// apart from t0, and returns its counts and latencies.
func (a *asking) client(ctx context.Context, t0 time.Time) (loopSummary, []time.Duration) {
	var s loopSummary
	var lat []time.Duration
	next := t0
	for i := 0; (a.repeat == 0 || i < a.repeat) && ctx.Err() == nil; i++ {
		if d := time.Until(next); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		next = next.Add(a.interval)
		tq := time.Now()
		qctx, cancel := context.WithTimeout(ctx, a.timeout)
		_, pos, pairs, err := a.ask(qctx)
		cancel()
		s.Requests++
		if err != nil {
			s.Errors++
			s.LastError = err.Error()
			if ae := (*client.APIError)(nil); a.repeat == 0 && !errors.As(err, &ae) {
				break // the server has gone
			}
			continue
		}
		lat = append(lat, time.Since(tq))
		s.Pairs += pairs
		if s.FirstPosition == 0 {
			s.FirstPosition = pos
		}
		s.LastPosition = pos
	}
	return s, lat
}

// parsePairs parses "U V U V ..." into pairs.
func parsePairs(args []string) ([][2]uint32, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, usagef("connected: want pairs of vertex ids, got %d ids", len(args))
	}
	pairs := make([][2]uint32, len(args)/2)
	for i, a := range args {
		x, err := strconv.ParseUint(a, 10, 32)
		if err != nil {
			return nil, usagef("connected: %q is not a vertex id", a)
		}
		pairs[i/2][i%2] = uint32(x)
	}
	return pairs, nil
}

var sendCommand = &command{
	usage: "streamtool send ADDR STREAM",
	about: `Sends the records of STREAM (binary or packed) to a main node's
--updates-listen ADDR in the binary format, after "AUTH <token>" when
--token-file is given; with --live its header's update count is the live
marker 2^64−1 (the stream then ends when the connection closes).
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var tokenFile string
		var live bool
		fs.StringVar(&tokenFile, "token-file", "", "file holding the main node's token")
		fs.BoolVar(&live, "live", false, "send the header's update count as unknown (2^64−1)")
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			if fs.NArg() != 2 {
				return usagef("want ADDR and STREAM")
			}
			token, err := readToken(tokenFile)
			if err != nil {
				return err
			}
			return send(ctx, e, fs.Arg(0), fs.Arg(1), token, live)
		}
	},
}

// send writes the stream at path to a TCP producer connection to addr.
func send(ctx context.Context, e *env, addr, path, token string, live bool) error {
	src, closeSrc, err := openStream(ctx, path, "binary")
	if err != nil {
		return err
	}
	defer closeSrc()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	w := bufio.NewWriterSize(conn, 256<<10)
	if token != "" {
		fmt.Fprintf(w, "AUTH %s\n", token)
	}
	h := src.Header()
	if live {
		h.Updates = stream.UnknownUpdates
	}
	w.Write(stream.AppendHeader(nil, h))
	buf := make([]stream.Update, 16<<10)
	var rec [stream.RecordBytes]byte
	var sent uint64
	t0 := time.Now()
	for {
		n, err := src.Read(buf)
		for _, u := range buf[:n] {
			rec[0] = byte(u.Type)
			binary.LittleEndian.PutUint32(rec[1:5], u.Src)
			binary.LittleEndian.PutUint32(rec[5:9], u.Dst)
			if _, err := w.Write(rec[:]); err != nil {
				return fmt.Errorf("send to %s after %d updates: %w", addr, sent, err)
			}
			sent++
		}
		if err != nil {
			if err == io.EOF {
				break
			}
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("send to %s after %d updates: %w", addr, sent, err)
	}
	return e.printJSON(map[string]any{"sent": sent, "seconds": time.Since(t0).Seconds()})
}
