// Package client asks a main node's query API (main-node --query-listen)
// for connected components while its live stream runs. Every answer
// carries Position, the number of stream updates it is exact for, and
// how many records of each producer those were.
//
// A Client is safe for concurrent use. Each call takes a context: its
// deadline bounds the whole request, and an expired one returns an error
// for which errors.Is(err, context.DeadlineExceeded) holds. An answer of
// the server's other than 200 is an *APIError.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Client asks one main node's API.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// New returns a Client of the API at addr ("HOST:PORT" or an http:// URL),
// sending token (from the main node's --token-file; empty for none) with
// every request, over hc (nil means http.DefaultClient).
func New(addr, token string, hc *http.Client) *Client {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(addr, "/"), token: token, hc: hc}
}

// APIError is an answer of the server's other than 200: a bad request
// (400: malformed, unknown vertex, too many pairs), 401 (token), 413 (body
// too large), 503 (too many requests in flight, or the service stopped),
// 504 (no barrier in time).
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the server's explanation.
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("client: %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// Producer is what an answer holds of one producer's records: exactly its
// first Applied.
type Producer struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	Applied uint64 `json:"applied"`
	Closed  bool   `json:"closed"`
	Err     string `json:"error,omitempty"`
}

// Head is what every answer starts with.
type Head struct {
	// Position is the number of updates the answer is exact for.
	Position  uint64     `json:"position"`
	Producers []Producer `json:"producers"`
}

// Components is the answer of Components.
type Components struct {
	Head
	Components int `json:"components"`
	// Labels holds a component label per vertex, numbered by each
	// component's smallest vertex; nil unless asked for.
	Labels []uint32 `json:"labels"`
}

// Connected is the answer of Connected.
type Connected struct {
	Head
	// Connected[i] says whether pairs[i]'s vertices are connected.
	Connected []bool `json:"connected"`
}

// Forest is the answer of Forest: a spanning forest's edges.
type Forest struct {
	Head
	Edges [][2]uint32 `json:"edges"`
}

// Status is the service's progress (its counts move on while it runs).
type Status struct {
	Vertices         uint32     `json:"vertices"`
	Updates          uint64     `json:"updates"`
	UpdatesPerSecond float64    `json:"updates_per_second"`
	LastPosition     uint64     `json:"last_position"`
	Queries          uint64     `json:"queries"`
	Producers        []Producer `json:"producers"`
	Stopping         bool       `json:"stopping"`
}

// Components asks for the number of components, and every vertex's label
// when labels is true.
func (c *Client) Components(ctx context.Context, labels bool) (*Components, error) {
	var out Components
	return &out, c.do(ctx, http.MethodGet, "/v1/components?labels="+strconv.FormatBool(labels), nil, &out)
}

// Connected asks whether each pair's vertices are connected, all in one
// answer (one request; the server takes at most 100,000 pairs).
func (c *Client) Connected(ctx context.Context, pairs [][2]uint32) (*Connected, error) {
	body, err := json.Marshal(struct {
		Pairs [][2]uint32 `json:"pairs"`
	}{pairs})
	if err != nil {
		return nil, err
	}
	var out Connected
	return &out, c.do(ctx, http.MethodPost, "/v1/connected", body, &out)
}

// Forest asks for a spanning forest.
func (c *Client) Forest(ctx context.Context) (*Forest, error) {
	var out Forest
	return &out, c.do(ctx, http.MethodGet, "/v1/forest", nil, &out)
}

// Status asks for the service's progress.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var out Status
	return &out, c.do(ctx, http.MethodGet, "/v1/status", nil, &out)
}

// Shutdown asks the main node to stop at its next barrier, answer what
// waits, write its summary and exit.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/v1/shutdown", nil, nil)
}

// do sends one request and decodes a 2xx answer into out (unless nil).
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	resp, err := c.send(ctx, method, path, "application/json", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("client: %s %s: %w", method, path, ctx.Err())
		}
		return fmt.Errorf("client: %s %s: malformed answer: %w", method, path, err)
	}
	return nil
}

// send sends one request with body (of contentType, unless nil) and
// returns its 2xx answer, whose body the caller must close, or the error.
func (c *Client) send(ctx context.Context, method, path, contentType string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if ctx.Err() != nil {
			return nil, fmt.Errorf("client: %s %s: %w", method, path, ctx.Err())
		} else if errors.As(err, &ue) {
			return nil, fmt.Errorf("client: %s %s: %w", method, path, ue.Err)
		}
		return nil, fmt.Errorf("client: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return nil, &APIError{StatusCode: resp.StatusCode, Message: e.Error}
	}
	return resp, nil
}
