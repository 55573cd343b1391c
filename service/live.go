package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"sketchcc/cc"
	"sketchcc/ingest"
)

// Inputs says where a live stream comes from: standard input, TCP
// producers, or both.
type Inputs struct {
	// Stdin, when not nil, is read as one producer (named "stdin") whose
	// bad header or record ends the stream.
	Stdin io.ReadCloser
	// Listen, when not empty, is the address (LoopbackDefault applies) on
	// which TCP producers connect; QueryListen, when not empty, the API's.
	Listen, QueryListen string
	// Token, when not empty, must open each TCP producer's connection
	// (ingest.LiveConfig.Token) and come with each API request
	// (APIConfig.Token).
	Token string
	// Producers is ingest.LiveConfig.Producers; a negative value means 1
	// with Stdin alone, else 0 (until stopped).
	Producers int
	// Timing is the Service's (Timing.QueryGap).
	Timing Timing
	// Announce, when set, is told the address a listener took.
	Announce func(what, addr string)
	// Logger receives the producers' errors; nil means slog.Default().
	Logger *slog.Logger
}

// Live is a live stream and its query API, started by OpenLive.
type Live struct {
	// Src is the stream.
	Src    *ingest.Live
	api    *API // nil without Inputs.QueryListen
	log    *slog.Logger
	timing Timing
}

// OpenLive starts the query API of in (when in.QueryListen is set: it
// answers 503 until Run) and its live stream, and waits until the
// stream's first header has fixed the vertex count
// (ingest.Live.WaitHeader); the caller must Close the result. It returns
// a listener's error or the first header's, or ctx's when ctx ends first.
func OpenLive(ctx context.Context, in Inputs) (_ *Live, err error) {
	l := &Live{log: in.Logger, timing: in.Timing}
	if l.log == nil {
		l.log = slog.Default()
	}
	if in.Producers < 0 {
		in.Producers = 0
		if in.Listen == "" {
			in.Producers = 1
		}
	}
	l.Src = ingest.NewLive(ingest.LiveConfig{Producers: in.Producers, Token: in.Token,
		OnError: func(name string, err error) { l.log.Warn("live producer ended", "producer", name, "err", err) }})
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	announce := func(what, addr string) {
		if in.Announce != nil {
			in.Announce(what, addr)
		}
	}
	if in.QueryListen != "" {
		if l.api, err = Serve(LoopbackDefault(in.QueryListen), nil, APIConfig{Token: in.Token, Logger: l.log}); err != nil {
			return nil, err
		}
		announce("query API on", "http://"+l.api.Addr())
	}
	if in.Stdin != nil {
		l.Src.Add("stdin", in.Stdin)
	}
	if in.Listen != "" {
		ln, err := net.Listen("tcp", LoopbackDefault(in.Listen))
		if err != nil {
			return nil, fmt.Errorf("service: cannot listen for updates: %w", err)
		}
		announce("taking updates on", ln.Addr().String())
		l.Src.Serve(ln)
	}
	h, err := l.Src.WaitHeader(ctx)
	if err != nil {
		return nil, err
	}
	l.log.Info("live stream", "vertices", h.Vertices, "producers", in.Producers)
	return l, nil
}

// Run runs a Service over room and the stream (Service.Run), its API
// answering for it, and returns Run's last answer.
func (l *Live) Run(ctx context.Context, room *cc.Room) (*Answer, cc.RunStats, error) {
	svc := New(room, l.Src, l.timing)
	if l.api != nil {
		l.api.Attach(svc)
	}
	ans, st, err := svc.Run(ctx)
	if err == nil {
		l.log.Info("live stream stopped", "updates", ans.Position, "producers", ans.Producers)
	}
	return ans, st, err
}

// Close stops the API (letting the answers being written finish) and the
// stream, and waits for their goroutines.
func (l *Live) Close() {
	if l.api != nil {
		l.api.Close()
	}
	l.Src.Close()
}
