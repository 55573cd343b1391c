package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
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
stream position it is exact for ("position": updates applied).
`,
	setup: func(fs *pflag.FlagSet) func(context.Context, *env, *pflag.FlagSet) error {
		var tokenFile string
		var labels bool
		var timeout time.Duration
		fs.StringVar(&tokenFile, "token-file", "", "file holding the main node's token")
		fs.BoolVar(&labels, "labels", false, "components: every vertex's label too")
		fs.DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long")
		return func(ctx context.Context, e *env, fs *pflag.FlagSet) error {
			if fs.NArg() < 2 {
				return usagef("want ADDR and a question")
			}
			token, err := readToken(tokenFile)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			c := client.New(fs.Arg(0), token, nil)
			var out any
			switch q, args := fs.Arg(1), fs.Args()[2:]; {
			case q == "components" && len(args) == 0:
				out, err = c.Components(ctx, labels)
			case q == "connected":
				pairs, perr := parsePairs(args)
				if perr != nil {
					return perr
				}
				out, err = c.Connected(ctx, pairs)
			case q == "forest" && len(args) == 0:
				out, err = c.Forest(ctx)
			case q == "status" && len(args) == 0:
				out, err = c.Status(ctx)
			case q == "shutdown" && len(args) == 0:
				err = c.Shutdown(ctx)
				out = map[string]bool{"stopping": err == nil}
			default:
				return usagef("unknown question %q %q", q, args)
			}
			if err != nil {
				return err
			}
			return e.printJSON(out)
		}
	},
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
