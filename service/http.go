package service

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"

	"sketchcc/ingest"
)

// API limits; a zero field of APIConfig takes its default.
const (
	DefaultMaxConns     = 1024
	DefaultMaxRequests  = 256
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxPairs     = 100_000
	DefaultAnswerWait   = 30 * time.Second
	DefaultWriteWait    = 10 * time.Second
	// readWait bounds the reading of a request's body.
	readWait = 10 * time.Second
)

// APIConfig configures the HTTP API.
type APIConfig struct {
	// Token, when not empty, must come with every request as the header
	// "Authorization: Bearer <token>"; a request without it gets 401.
	Token string
	// MaxConns bounds the connections served at once; more wait to be
	// accepted. MaxRequests bounds the requests in flight; more get 503.
	MaxConns, MaxRequests int
	// MaxBodyBytes bounds a request body (413 past it), and MaxPairs the
	// pairs of one connected request (400 past it).
	MaxBodyBytes int64
	MaxPairs     int
	// AnswerWait bounds a request's wait for its answer (504 past it).
	AnswerWait time.Duration
	// WriteWait bounds the writing of an answer once it is taken: a
	// client that has not read it all by then loses its connection, and
	// its request stops counting against MaxRequests.
	WriteWait time.Duration
	// Logger receives the server's errors; nil means slog.Default().
	Logger *slog.Logger
}

func (c *APIConfig) ensureDefaults() {
	for _, f := range []struct {
		p   *int
		def int
	}{{&c.MaxConns, DefaultMaxConns}, {&c.MaxRequests, DefaultMaxRequests}, {&c.MaxPairs, DefaultMaxPairs}} {
		if *f.p <= 0 {
			*f.p = f.def
		}
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.AnswerWait <= 0 {
		c.AnswerWait = DefaultAnswerWait
	}
	if c.WriteWait <= 0 {
		c.WriteWait = DefaultWriteWait
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// API serves a Service's answers over HTTP with JSON bodies:
//
//	GET  /v1/status                 Status
//	GET  /v1/components[?labels=1]  {position, producers, components[, labels]}
//	GET  /v1/connected?u=U&v=V      {position, producers, u, v, connected}
//	POST /v1/connected              body {"pairs": [[u,v], ...]}: {position, producers, connected: [bool, ...]}
//	                                or binary pairs (Content-Type application/octet-stream; binaryType)
//	GET  /v1/forest                 {position, producers, edges: [[u,v], ...]}
//	POST /v1/shutdown               {stopping: true}: the service stops at its next barrier
//
// An error is a 4xx or 5xx answer with the body {"error": "..."}.
type API struct {
	svc     atomic.Pointer[Service] // nil until Attach: 503 "not started"
	binHead atomic.Pointer[binaryHead]
	cfg     APIConfig
	ln      net.Listener
	srv     *http.Server
	sem     chan struct{}
	done    chan struct{}
}

// Serve listens on addr (HOST:PORT; port 0 picks one, see Addr) and
// serves the API of svc, or of the Service attached later (Attach) when
// svc is nil (a request before then gets 503), until Close.
func Serve(addr string, svc *Service, cfg APIConfig) (*API, error) {
	cfg.ensureDefaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("service: cannot listen on %q: %w", addr, err)
	}
	a := &API{cfg: cfg, ln: ln, sem: make(chan struct{}, cfg.MaxRequests), done: make(chan struct{})}
	a.svc.Store(svc)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", a.status)
	mux.HandleFunc("GET /v1/components", a.components)
	mux.HandleFunc("GET /v1/connected", a.connectedOne)
	mux.HandleFunc("POST /v1/connected", a.connectedBatch)
	mux.HandleFunc("GET /v1/forest", a.forest)
	mux.HandleFunc("POST /v1/shutdown", a.shutdown)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: %s %s (see GET /v1/status)", r.Method, r.URL.Path)
	})
	a.srv = &http.Server{Handler: a.guard(mux), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: readWait,
		WriteTimeout: readWait + cfg.AnswerWait + cfg.WriteWait, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	go func() {
		defer close(a.done)
		if err := a.srv.Serve(netutil.LimitListener(ln, cfg.MaxConns)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Logger.Warn("query API stopped", "err", err)
		}
	}()
	return a, nil
}

// Attach makes the API answer for svc.
func (a *API) Attach(svc *Service) { a.svc.Store(svc) }

// Addr returns the address the API listens on.
func (a *API) Addr() string { return a.ln.Addr().String() }

// Close stops the API within 5 s, letting requests in flight finish
// meanwhile, and waits for its goroutine.
func (a *API) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if a.srv.Shutdown(ctx) != nil {
		a.srv.Close()
	}
	<-a.done
}

// guard checks the token and bounds the requests in flight and their
// bodies.
func (a *API) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Token != "" {
			got := []byte(r.Header.Get("Authorization"))
			if subtle.ConstantTimeCompare(got, []byte("Bearer "+a.cfg.Token)) != 1 {
				writeError(w, http.StatusUnauthorized, "missing or wrong token: send the header 'Authorization: Bearer TOKEN'")
				return
			}
		}
		select {
		case a.sem <- struct{}{}:
			defer func() { <-a.sem }()
		default:
			writeError(w, http.StatusServiceUnavailable, "%d requests in flight already; retry", a.cfg.MaxRequests)
			return
		}
		if a.svc.Load() == nil {
			writeError(w, http.StatusServiceUnavailable, "the stream has not started: no producer's header yet")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// answer asks the service and writes the error of a failed ask; nil then.
// From an answer on, the connection's writes must end within WriteWait.
func (a *API) answer(w http.ResponseWriter, r *http.Request) *Answer {
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.AnswerWait)
	defer cancel()
	ans, err := a.svc.Load().Ask(ctx)
	switch {
	case err == nil:
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(a.cfg.WriteWait))
		return ans
	case errors.Is(err, ErrStopped):
		writeError(w, http.StatusServiceUnavailable, "the service has stopped answering")
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "no barrier within %v", a.cfg.AnswerWait)
	case r.Context().Err() != nil: // the client has gone: nobody reads
	default:
		writeError(w, http.StatusInternalServerError, "%v", err)
	}
	return nil
}

// answerHead is what every answer starts with.
type answerHead struct {
	Position  uint64                 `json:"position"`
	Producers []ingest.ProducerCount `json:"producers"`
}

func head(a *Answer) answerHead { return answerHead{a.Position, a.Producers} }

func (a *API) status(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.svc.Load().Status())
}

func (a *API) components(w http.ResponseWriter, r *http.Request) {
	labels, err := boolParam(r, "labels")
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ans := a.answer(w, r)
	if ans == nil {
		return
	}
	out := struct {
		answerHead
		Components int `json:"components"`
	}{answerHead: head(ans), Components: ans.Result.Components}
	if !labels {
		writeJSON(w, http.StatusOK, out)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	b = append(append(make([]byte, 0, labelChunkBytes), b[:len(b)-1]...), `,"labels":[`...)
	writeLabels(w, b, ans.Result.Labels)
}

// labelChunkBytes is the size of the chunks a labels answer is written
// in: what a client that stops reading holds of the server's memory,
// whatever the vertex count.
const labelChunkBytes = 64 << 10

// writeLabels writes the JSON object that b opens with the labels as its
// last member, in chunks of labelChunkBytes, and stops at the first
// failed write (a client gone or too slow).
func writeLabels(w io.Writer, b []byte, labels []uint32) {
	for i, l := range labels {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(l), 10)
		if len(b) >= labelChunkBytes-16 {
			if _, err := w.Write(b); err != nil {
				return
			}
			b = b[:0]
		}
	}
	w.Write(append(b, "]}\n"...))
}

func (a *API) connectedOne(w http.ResponseWriter, r *http.Request) {
	n := a.svc.Load().src.Header().Vertices
	u, err1 := vertexParam(r, "u", n)
	v, err2 := vertexParam(r, "v", n)
	if err := errors.Join(err1, err2); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ans := a.answer(w, r)
	if ans == nil {
		return
	}
	l := ans.Result.Labels
	writeJSON(w, http.StatusOK, struct {
		answerHead
		U         uint32 `json:"u"`
		V         uint32 `json:"v"`
		Connected bool   `json:"connected"`
	}{head(ans), u, v, l[u] == l[v]})
}

// pairsBody is the body of POST /v1/connected.
type pairsBody struct {
	Pairs [][2]uint32 `json:"pairs"`
}

func (a *API) connectedBatch(w http.ResponseWriter, r *http.Request) {
	if isBinary(r) {
		a.connectedBinary(w, r)
		return
	}
	var body pairsBody
	if status, err := decodeBody(r, &body); err != nil {
		writeError(w, status, "%v", err)
		return
	}
	if len(body.Pairs) > a.cfg.MaxPairs {
		writeError(w, http.StatusBadRequest, "%d pairs, at most %d a request", len(body.Pairs), a.cfg.MaxPairs)
		return
	}
	n := a.svc.Load().src.Header().Vertices
	for i, p := range body.Pairs {
		if p[0] >= n || p[1] >= n {
			writeError(w, http.StatusBadRequest, "pair %d (%d,%d): vertex out of range, the stream has %d vertices", i, p[0], p[1], n)
			return
		}
	}
	ans := a.answer(w, r)
	if ans == nil {
		return
	}
	l := ans.Result.Labels
	conn := make([]bool, len(body.Pairs))
	for i, p := range body.Pairs {
		conn[i] = l[p[0]] == l[p[1]]
	}
	writeJSON(w, http.StatusOK, struct {
		answerHead
		Connected []bool `json:"connected"`
	}{head(ans), conn})
}

func (a *API) forest(w http.ResponseWriter, r *http.Request) {
	ans := a.answer(w, r)
	if ans == nil {
		return
	}
	edges := make([][2]uint32, len(ans.Result.Forest.Edges))
	for i, e := range ans.Result.Forest.Edges {
		edges[i] = [2]uint32{e.Src, e.Dst}
	}
	writeJSON(w, http.StatusOK, struct {
		answerHead
		Edges [][2]uint32 `json:"edges"`
	}{head(ans), edges})
}

func (a *API) shutdown(w http.ResponseWriter, r *http.Request) {
	a.svc.Load().Shutdown()
	writeJSON(w, http.StatusAccepted, struct {
		Stopping bool   `json:"stopping"`
		Updates  uint64 `json:"updates"`
	}{true, a.svc.Load().src.Updates()})
}

// decodeBody decodes r's JSON body into v: one object, no unknown field.
// It returns the status and error of a bad body.
func decodeBody(r *http.Request, v any) (int, error) {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.Decode(new(json.RawMessage)) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", tooBig.Limit)
	case err == io.EOF:
		return http.StatusBadRequest, errors.New(`empty body: want {"pairs": [[u,v], ...]}`)
	}
	return http.StatusBadRequest, fmt.Errorf(`malformed body (want {"pairs": [[u,v], ...]}): %v`, err)
}

// vertexParam parses the query parameter name as a vertex id below n.
func vertexParam(r *http.Request, name string, n uint32) (uint32, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, fmt.Errorf("parameter %s missing", name)
	}
	x, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("parameter %s=%q is not a vertex id", name, s)
	}
	if uint32(x) >= n {
		return 0, fmt.Errorf("parameter %s=%d out of range: the stream has %d vertices", name, x, n)
	}
	return uint32(x), nil
}

// boolParam parses the optional query parameter name (absent: false).
func boolParam(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("parameter %s=%q: want true or false", name, s)
	}
	return b, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, struct {
		Error string `json:"error"`
	}{fmt.Sprintf(format, args...)})
}
