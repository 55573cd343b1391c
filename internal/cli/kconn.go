package cli

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/cc"
	"sketchcc/kconn"
	"sketchcc/stream"
)

// KConn is main-node's k-edge-connectivity flags and answers: with K >= 2
// every query is a k-forest query (cc.Room.KForests)
// whose certificate kconn.Analyze reads. Its methods are called on the
// querying goroutine only.
type KConn struct {
	// K is the number of sketch sets, 1 for CC only.
	K int
	// Out, Bridges, MinCut and Forests are the output files ("" for
	// none).
	Out, Bridges, MinCut, Forests string
	// Records holds every query's answer, for --json.
	Records []KRecord
}

// KRecord is one k-forest query's answer, as --json prints it.
type KRecord struct {
	AfterUpdates uint64 `json:"after_updates"`
	K            int    `json:"k"`
	// EdgeConnectivity is min(K, λ) of the whole graph, 0 when it is
	// disconnected.
	EdgeConnectivity int `json:"edge_connectivity"`
	Bridges          int `json:"bridges"`
	// MinCut is the size of a minimum cut when EdgeConnectivity < K.
	MinCut           *int `json:"min_cut,omitempty"`
	CertificateEdges int  `json:"certificate_edges"`
	// FlushSeconds is the time to flush the pipeline before F1,
	// ExtractSeconds to extract F2 … FK, RestoreSeconds to put their edges
	// back, CutSeconds to read the certificate; F1's time is the CC
	// query's (its cc_seconds).
	FlushSeconds   float64 `json:"flush_seconds"`
	ExtractSeconds float64 `json:"extract_seconds"`
	RestoreSeconds float64 `json:"restore_seconds"`
	CutSeconds     float64 `json:"cut_seconds"`
}

// AddFlags defines the k-connectivity flags on fs.
func (k *KConn) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&k.K, "k-connectivity", 1, "keep K independent sketch sets (K-fold memory) and answer min(K, λ), bridges and a min cut below K at every query; 1: components only")
	fs.StringVar(&k.Out, "k-out", "", "with K >= 2: write 'component min(K,λ)' lines to this file")
	fs.StringVar(&k.Bridges, "bridges", "", "with K >= 2: write the bridges as 'u v' lines to this file")
	fs.StringVar(&k.MinCut, "min-cut", "", "with K >= 2: write one side of a minimum cut below K, one vertex a line, to this file")
	fs.StringVar(&k.Forests, "forests", "", "with K >= 2: write the K forests as 'i u v' lines to this file")
}

// Answerer returns the cc.Schedule.KAnswer of the flags for a graph on
// vertices vertices whose stream ends after total updates, or nil for K =
// 1. Each answer is recorded and written to the output files: as
// FILE.<updates> for a query before the end, as FILE for the final one.
// A certificate kconn cannot read (a forest edge out of range: a bug) is
// an error.
func (k *KConn) Answerer(vertices uint32, total uint64) func(*cc.KResult) error {
	if k.K < 2 {
		return nil
	}
	return func(kr *cc.KResult) error {
		t0 := time.Now()
		cert := kr.Certificate()
		a, err := kconn.Analyze(vertices, cert, k.K)
		if err != nil {
			return fmt.Errorf("k-connectivity: %w", err)
		}
		after := kr.CC.AfterUpdates
		rec := KRecord{AfterUpdates: after, K: k.K, EdgeConnectivity: a.Lambda, Bridges: len(a.Bridges),
			CertificateEdges: len(cert), FlushSeconds: kr.Flush.Seconds(), ExtractSeconds: kr.Extract.Seconds(), RestoreSeconds: kr.Restore.Seconds(),
			CutSeconds: time.Since(t0).Seconds()}
		if a.MinCut != nil {
			rec.MinCut = &a.MinCut.Size
		}
		k.Records = append(k.Records, rec)
		if after == total {
			return k.write(a, kr, "")
		}
		return k.write(a, kr, "."+strconv.FormatUint(after, 10))
	}
}

// Summary returns the text summary's line for the final answer, or "" for
// K = 1.
func (k *KConn) Summary() string {
	if len(k.Records) == 0 {
		return ""
	}
	r := k.Records[len(k.Records)-1]
	cut := fmt.Sprintf("no cut below %d edges", r.K)
	switch {
	case r.MinCut != nil && *r.MinCut == 0:
		cut = "disconnected"
	case r.MinCut != nil:
		cut = fmt.Sprintf("a minimum cut of %d edge(s)", *r.MinCut)
	}
	return fmt.Sprintf("k-connect.    min(K, λ) = %d with K = %d: %d bridge(s), %s (certificate of %d edges; forests %.3f s, restore %.3f s, cut %.3f s)\n",
		r.EdgeConnectivity, r.K, r.Bridges, cut, r.CertificateEdges, r.ExtractSeconds, r.RestoreSeconds, r.CutSeconds)
}

// Columns returns the per-query table's k-connectivity columns: with row
// false their headings, else the answer of the query after the given
// number of updates ("-" in each for a query with no k answer). Both are
// "" for K = 1.
func (k *KConn) Columns(row bool, after uint64) string {
	if k.K < 2 {
		return ""
	}
	if !row {
		return fmt.Sprintf(" %9s %8s %8s", fmt.Sprintf("min(%d,λ)", k.K), "bridges", "min cut")
	}
	for _, r := range k.Records {
		if r.AfterUpdates != after {
			continue
		}
		cut := "-"
		if r.MinCut != nil {
			cut = strconv.Itoa(*r.MinCut)
		}
		return fmt.Sprintf(" %9d %8d %8s", r.EdgeConnectivity, r.Bridges, cut)
	}
	return fmt.Sprintf(" %9s %8s %8s", "-", "-", "-")
}

// write writes the output files of answer a, each path with suffix.
func (k *KConn) write(a *kconn.Answer, kr *cc.KResult, suffix string) error {
	num := strconv.AppendUint
	var errs []error
	if k.Out != "" {
		errs = append(errs, writeLines(k.Out+suffix, len(a.ComponentLambda), func(b []byte, i int) []byte {
			return strconv.AppendInt(append(num(b, uint64(i), 10), ' '), int64(a.ComponentLambda[i]), 10)
		}))
	}
	if k.Bridges != "" {
		errs = append(errs, writeLines(k.Bridges+suffix, len(a.Bridges), func(b []byte, i int) []byte {
			return num(append(num(b, uint64(a.Bridges[i].Src), 10), ' '), uint64(a.Bridges[i].Dst), 10)
		}))
	}
	if k.MinCut != "" {
		var side []uint32
		if a.MinCut != nil {
			side = a.MinCut.Side
		}
		errs = append(errs, writeLines(k.MinCut+suffix, len(side), func(b []byte, i int) []byte {
			return num(b, uint64(side[i]), 10)
		}))
	}
	if k.Forests != "" {
		type row struct {
			i int
			e stream.Edge
		}
		var rows []row
		for i, f := range kr.Forests {
			for _, e := range f {
				rows = append(rows, row{i + 1, e})
			}
		}
		errs = append(errs, writeLines(k.Forests+suffix, len(rows), func(b []byte, i int) []byte {
			b = append(num(b, uint64(rows[i].i), 10), ' ')
			return num(append(num(b, uint64(rows[i].e.Src), 10), ' '), uint64(rows[i].e.Dst), 10)
		}))
	}
	return errors.Join(errs...)
}
