package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"sketchcc/cc"
	"sketchcc/internal/cli"
	"sketchcc/service"
)

// liveOn reports whether the run reads a live stream.
func (c config) liveOn() bool { return c.stream == "-" || c.live.UpdatesListen != "" }

// openLive starts the live stream of c (standard input, TCP producers or
// both) and waits for its first header.
func openLive(ctx context.Context, c config, stderr io.Writer, log *slog.Logger) (input, func(), error) {
	token, err := service.ReadToken(c.live.TokenFile)
	if err != nil {
		return input{}, nil, fmt.Errorf("--token-file: %w", err)
	}
	in := service.Inputs{Listen: c.live.UpdatesListen, QueryListen: c.live.QueryListen, Token: token,
		Timing: service.Timing{QueryGap: c.live.QueryGap}, Producers: c.live.Producers, Logger: log,
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

// liveErrors returns the problems of the live flags l among fs's; stdin
// says that the stream is standard input.
func liveErrors(l cli.Live, fs *pflag.FlagSet, stdin bool) (errs []error) {
	if l.QueryListen != "" && !stdin && l.UpdatesListen == "" {
		errs = append(errs, errors.New("--query-listen needs a live stream: --stream - or --updates-listen"))
	}
	for _, f := range []string{"checkpoint-dir", "resume", "checkpoint-rate", "queries", "query-at", "readers", "format", "point-queries", "k-connectivity"} {
		if (stdin || l.UpdatesListen != "") && fs.Changed(f) {
			errs = append(errs, fmt.Errorf("--%s is for a stream file, not a live stream (binary or packed, told from its header; its records are not kept, so it cannot resume)", f))
		}
	}
	if l.Producers < -1 {
		errs = append(errs, fmt.Errorf("--producers=%d, want at least 0", l.Producers))
	}
	for _, a := range []struct{ flag, addr string }{{"--updates-listen", l.UpdatesListen}, {"--query-listen", l.QueryListen}} {
		if a.addr != "" && !service.Loopback(a.addr) && l.TokenFile == "" {
			errs = append(errs, fmt.Errorf("%s=%s is not a loopback address: give --token-file", a.flag, a.addr))
		}
	}
	return errs
}
