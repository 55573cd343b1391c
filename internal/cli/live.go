package cli

import (
	"time"

	"github.com/spf13/pflag"
)

// Live is main-node's flags of a live stream and of the query API
// (package service), set by AddFlags and checked by Validate.
type Live struct {
	// UpdatesListen and QueryListen are the producers' and the API's
	// HOST:PORT ("" for none); TokenFile holds their token ("": none).
	UpdatesListen, QueryListen, TokenFile string
	// Producers ends the stream after that many producers closed (-1:
	// the default, 0: never).
	Producers int
	// QueryGap is the least time between two queries the API takes.
	QueryGap time.Duration
}

// AddFlags defines the live flags on fs, bound to l.
func (l *Live) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&l.UpdatesListen, "updates-listen", "", "take binary streams from TCP producers on HOST:PORT (host omitted: loopback)")
	fs.StringVar(&l.QueryListen, "query-listen", "", "serve the HTTP+JSON query API on HOST:PORT (host omitted: loopback)")
	fs.StringVar(&l.TokenFile, "token-file", "", "file holding the token that producers (AUTH line) and API clients (Bearer) must send; required off loopback")
	fs.DurationVar(&l.QueryGap, "query-gap", 0, "least time between two queries the API takes: questions arriving sooner share the next one, ingestion goes on meanwhile")
	fs.IntVar(&l.Producers, "producers", -1, "end the live stream once this many producers have connected and closed (0: run until stopped; default 1 when standard input is the only producer, else 0)")
}
