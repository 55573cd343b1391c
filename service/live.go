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
	// which TCP producers connect.
	Listen string
	// Token, when not empty, must open each TCP producer's connection
	// (ingest.LiveConfig.Token) and come with each API request
	// (APIConfig.Token).
	Token string
	// Producers is ingest.LiveConfig.Producers; a negative value means 1
	// with Stdin alone, else 0 (until stopped).
	Producers int
	// Announce, when set, is told the address a listener took.
	Announce func(what, addr string)
	// Logger receives the producers' errors; nil means slog.Default().
	Logger *slog.Logger
}

// OpenLive starts the live stream of in and waits until its first header
// has fixed the vertex count (ingest.Live.WaitHeader); the caller must
// Close the source. It returns the listener's error or the first
// header's, or ctx's when ctx ends first.
func OpenLive(ctx context.Context, in Inputs) (*ingest.Live, error) {
	log := in.Logger
	if log == nil {
		log = slog.Default()
	}
	if in.Producers < 0 {
		in.Producers = 0
		if in.Listen == "" {
			in.Producers = 1
		}
	}
	lv := ingest.NewLive(ingest.LiveConfig{Producers: in.Producers, Token: in.Token,
		OnError: func(name string, err error) { log.Warn("live producer ended", "producer", name, "err", err) }})
	if in.Stdin != nil {
		lv.Add("stdin", in.Stdin)
	}
	if in.Listen != "" {
		ln, err := net.Listen("tcp", LoopbackDefault(in.Listen))
		if err != nil {
			return nil, fmt.Errorf("service: cannot listen for updates: %w", err)
		}
		if in.Announce != nil {
			in.Announce("taking updates on", ln.Addr().String())
		}
		lv.Serve(ln)
	}
	h, err := lv.WaitHeader(ctx)
	if err != nil {
		lv.Close()
		return nil, err
	}
	log.Info("live stream", "vertices", h.Vertices, "producers", in.Producers)
	return lv, nil
}

// RunLive runs a Service over room and lv (Run), with its HTTP API on
// addr (LoopbackDefault applies; empty: no API) for as long as it runs,
// and returns Run's last answer. announce, when set, is told the API's
// address.
func RunLive(ctx context.Context, room *cc.Room, lv *ingest.Live, addr string, cfg APIConfig,
	announce func(what, addr string)) (*Answer, cc.RunStats, error) {
	cfg.ensureDefaults()
	svc := New(room, lv, 0)
	if addr != "" {
		api, err := Serve(LoopbackDefault(addr), svc, cfg)
		if err != nil {
			return nil, cc.RunStats{}, err
		}
		defer api.Close()
		if announce != nil {
			announce("query API on", "http://"+api.Addr())
		}
	}
	ans, st, err := svc.Run(ctx)
	if err == nil {
		cfg.Logger.Info("live stream stopped", "updates", ans.Position, "producers", ans.Producers)
	}
	return ans, st, err
}
