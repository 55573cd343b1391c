package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/offline/edgelist"
	"sketchcc/offline/replay"
	"sketchcc/stream"
)

// openStream opens a stream file. A binary file, or a packed one (detected
// from its header), is opened with stream.Open, which checks its size
// against the header, unless it is gzip-compressed;
// a text file (typed or untyped, decided by its first update line) may be
// gzip-compressed too. Once ctx is done the source returns ctx.Err() and
// its file is closed (ending a read that blocks on a pipe). The returned
// func closes the file.
func openStream(ctx context.Context, path, format string) (stream.Source, func(), error) {
	src, closeSrc, err := openSource(path, format)
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, closeSrc)
	return interruptible{Source: src, err: ctx.Err}, func() { stop(); closeSrc() }, nil
}

// interruptible is a Source whose Read fails with err() once it is not
// nil.
type interruptible struct {
	stream.Source
	err func() error
}

func (s interruptible) Read(dst []stream.Update) (int, error) {
	if err := s.err(); err != nil {
		return 0, err
	}
	return s.Source.Read(dst)
}

// openSource is openStream without ctx.
func openSource(path, format string) (stream.Source, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open stream: %w", err)
	}
	var magic [2]byte
	n, _ := io.ReadFull(f, magic[:])
	gz := n == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("cannot read stream: %w", err)
	}
	if format == "binary" && !gz {
		f.Close()
		sf, err := stream.Open(path)
		if err != nil {
			return nil, nil, err
		}
		return sf.Reader(0, sf.Header().Updates), func() { sf.Close() }, nil
	}
	r, err := edgelist.Decompressed(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var src stream.Source
	if format == "binary" {
		src, err = stream.NewReader(bufio.NewReader(r))
	} else {
		src, err = stream.NewTextReaderAuto(r, path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return src, func() { f.Close() }, nil
}

// progress returns a replay progress callback that logs about every 10%.
func progress(e *env, total uint64) func(uint64) {
	step := max(total/10, 1<<20)
	next := step
	t0 := time.Now()
	return func(n uint64) {
		if n >= next {
			e.log.Info("replaying", "updates", n, "of", total, "duration", time.Since(t0).Round(time.Millisecond))
			next += step
		}
	}
}

type validateResult struct {
	Valid  bool   `json:"valid"`
	Stream string `json:"stream"`
	replay.Result
}

// validateFailure is validate's verdict on an invalid stream: only what
// was established, no counts of a replay that did not finish.
type validateFailure struct {
	Valid  bool   `json:"valid"`
	Stream string `json:"stream"`
	Error  string `json:"error"`
	// Index and Offset locate the first bad update; nil for a header or
	// size problem.
	Index  *int64 `json:"index,omitempty"`
	Offset *int64 `json:"offset,omitempty"`
	// Header is the stream's header, when it was read.
	Header *headerJSON `json:"header,omitempty"`
}

type headerJSON struct {
	Vertices uint32 `json:"vertices"`
	Updates  uint64 `json:"updates"`
}

// readHeader returns the header at the start of the file at path, binary
// or packed, or nil when the file is shorter than a header or its header
// is bad.
func readHeader(path string) *headerJSON {
	file, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer file.Close()
	h, _, err := stream.ReadHeader(file)
	if err != nil {
		return nil
	}
	return &headerJSON{Vertices: h.Vertices, Updates: h.Updates}
}

var validateCommand = &command{
	usage: "streamtool validate FILE",
	about: `Checks that a binary stream is well formed: the file size matches the
header, every type byte is 0 or 1, ids are in range, there are no
self-loops, no insert of a present edge and no delete of an absent one.
Prints a JSON verdict: when valid, the vertices, updates, edges and
components; on the first violation only what was established: the error,
the update index and byte offset, and the header if it was read (exit
status 1). A header of 0 updates is a valid stream of isolated vertices. Memory: a bit per vertex pair (V²/16 bytes)
up to --max-bitmap-bytes, else a hash set of the edges.
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var maxBitmap int64
		fs.Int64Var(&maxBitmap, "max-bitmap-bytes", replay.DefaultMaxBitmapBytes, "largest pair bitmap; larger graphs use a hash set")
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			path, err := oneArg(fs, "stream file")
			if err != nil {
				return err
			}
			var res replay.Result
			f := validateFailure{Stream: path}
			src, closeSrc, err := openStream(ctx, path, "binary")
			if err == nil {
				defer closeSrc()
				h := src.Header()
				f.Header = &headerJSON{Vertices: h.Vertices, Updates: h.Updates}
				res, _, err = replay.Run(src, replay.Config{Strict: true, Name: path,
					MaxBitmapBytes: maxBitmap, Progress: progress(e, h.Updates)})
			}
			if err == nil {
				return e.printJSON(validateResult{Valid: true, Stream: path, Result: res})
			}
			var fe *stream.FormatError
			if !errors.As(err, &fe) {
				return err // not a verdict on the stream: cannot read it
			}
			if f.Header == nil {
				f.Header = readHeader(path) // a size problem: the header may still be there
			}
			f.Error = err.Error()
			if fe.Index >= 0 {
				f.Index, f.Offset = &fe.Index, &fe.Offset
			}
			fmt.Fprintf(e.stderr, "streamtool: invalid stream: %v%s\n", err, textHint(path))
			if err := e.printJSON(f); err != nil {
				return err
			}
			return errReported
		}
	},
}

var ccCommand = &command{
	usage: "streamtool cc FILE [--format binary|text] [--labels FILE]",
	about: `Prints the exact number of connected components of a stream's final
graph, replaying it with a plain union-find at the end. Every update
toggles its edge whatever its type, as in the XOR sketches (use validate to
check well-formedness). Text streams may be typed ("t u v") or untyped
("u v"); either format may be gzip-compressed. This is the ground truth.
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var format, labels string
		var maxBitmap int64
		fs.StringVar(&format, "format", "binary", "stream format: binary or text")
		fs.StringVar(&labels, "labels", "", "write one 'vertex component' line per vertex to this file")
		fs.Int64Var(&maxBitmap, "max-bitmap-bytes", replay.DefaultMaxBitmapBytes, "largest pair bitmap; larger graphs use a hash set")
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			path, err := oneArg(fs, "stream file")
			if err != nil {
				return err
			}
			if format != "binary" && format != "text" {
				return usagef("--format=%q, want binary or text", format)
			}
			src, closeSrc, err := openStream(ctx, path, format)
			if err != nil {
				return err
			}
			defer closeSrc()
			res, set, err := replay.Run(src, replay.Config{Name: path, MaxBitmapBytes: maxBitmap,
				Progress: progress(e, src.Header().Updates)})
			if err != nil {
				return err
			}
			if labels != "" {
				var o outputs
				defer o.abort()
				f, err := o.create(ctx, labels)
				if err != nil {
					return err
				}
				bw := bufio.NewWriterSize(f, 256<<10)
				var line []byte
				for v, l := range set.Components().Labels() {
					line = strconv.AppendUint(line[:0], uint64(v), 10)
					line = append(line, ' ')
					line = strconv.AppendUint(line, uint64(l), 10)
					line = append(line, '\n')
					bw.Write(line)
				}
				if err := bw.Flush(); err != nil {
					return fmt.Errorf("cannot write labels: %w", err)
				}
				if err := o.commit(); err != nil {
					return err
				}
			}
			return e.printJSON(struct {
				Vertices   uint32 `json:"vertices"`
				Updates    uint64 `json:"updates"`
				Edges      int64  `json:"edges"`
				Components int    `json:"components"`
			}{res.Vertices, res.Updates, res.Edges, res.Components})
		}
	},
}
