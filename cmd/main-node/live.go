package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/cc"
	"sketchcc/service"
)

// liveConfig is the flags of a live stream and of the query API.
type liveConfig struct {
	updatesListen, queryListen, tokenFile string
	producers                             int
	queryGap                              time.Duration
}

func addLiveFlags(fs *pflag.FlagSet, c *liveConfig) {
	fs.StringVar(&c.updatesListen, "updates-listen", "", "take binary streams from TCP producers on HOST:PORT (host omitted: loopback)")
	fs.StringVar(&c.queryListen, "query-listen", "", "serve the HTTP+JSON query API on HOST:PORT (host omitted: loopback)")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the token that producers (AUTH line) and API clients (Bearer) must send; required off loopback")
	fs.DurationVar(&c.queryGap, "query-gap", 0, "least time between two queries the API takes: questions arriving sooner share the next one, ingestion goes on meanwhile")
	fs.IntVar(&c.producers, "producers", -1, "end the live stream once this many producers have connected and closed (0: run until stopped; default 1 with --stream - alone, else 0)")
}

// liveOn reports whether the run reads a live stream.
func (c config) liveOn() bool { return c.stream == "-" || c.live.updatesListen != "" }

// validate returns the problems of the live flags among fs's.
func (c *liveConfig) validate(fs *pflag.FlagSet, stdin bool) (errs []error) {
	if c.queryListen != "" && !stdin && c.updatesListen == "" {
		errs = append(errs, errors.New("--query-listen needs a live stream: --stream - or --updates-listen"))
	}
	for _, f := range []string{"checkpoint-dir", "resume", "checkpoint-rate", "queries", "query-at", "readers", "format", "point-queries", "k-connectivity"} {
		if (stdin || c.updatesListen != "") && fs.Changed(f) {
			errs = append(errs, fmt.Errorf("--%s is for a stream file, not a live stream (binary or packed, told from its header; its records are not kept, so it cannot resume)", f))
		}
	}
	if c.producers < -1 {
		errs = append(errs, fmt.Errorf("--producers=%d, want at least 0", c.producers))
	}
	for _, l := range []struct{ flag, addr string }{{"--updates-listen", c.updatesListen}, {"--query-listen", c.queryListen}} {
		if l.addr != "" && !service.Loopback(l.addr) && c.tokenFile == "" {
			errs = append(errs, fmt.Errorf("%s=%s is not a loopback address: give --token-file", l.flag, l.addr))
		}
	}
	return errs
}

// openLive starts the live stream of c (standard input, TCP producers or
// both) and waits for its first header.
func openLive(ctx context.Context, c config, stderr io.Writer, log *slog.Logger) (input, func(), error) {
	token, err := service.ReadToken(c.live.tokenFile)
	if err != nil {
		return input{}, nil, fmt.Errorf("--token-file: %w", err)
	}
	in := service.Inputs{Listen: c.live.updatesListen, QueryListen: c.live.queryListen, Token: token,
		Timing: service.Timing{QueryGap: c.live.queryGap}, Producers: c.live.producers, Logger: log,
		Announce: func(what, addr string) { fmt.Fprintf(stderr, "main-node: %s %s\n", what, addr) }}
	if c.stream == "-" {
		in.Stdin = os.Stdin
	}
	lv, err := service.OpenLive(ctx, in)
	if err != nil {
		return input{}, nil, err
	}
	return input{src: lv.Src, live: lv}, lv.Close, nil
}

// serveLive ingests the live stream through room, answering the query
// API's questions at barriers, until it ends or ctx is done; the last
// answer is the run's final one.
func serveLive(ctx context.Context, c config, room *cc.Room, in input) (*runResult, error) {
	ans, st, err := in.live.Run(ctx, room)
	if err != nil {
		return nil, err
	}
	return &runResult{final: ans.Result, RunStats: st}, writeOutputs(c, ans.Result, "")
}
