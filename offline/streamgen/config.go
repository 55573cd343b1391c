package streamgen

import (
	"fmt"
	"log/slog"

	"sketchcc/stream"
)

// Config holds the settings both synthetic generators share.
type Config struct {
	// Seed selects the graph, the labels and the order; the output is a
	// pure function of the seed and the other settings, not of Workers or
	// PassUpdates.
	Seed uint64
	// Rounds is the number of churn rounds. In each round every final edge
	// is deleted and re-inserted with probability Churn, and every non-edge
	// is inserted and deleted again with the probability that makes
	// transient updates a share Transient of the stream. Zero means 1.
	Rounds int
	// Churn is the per-round probability, in [0, 1], that a final edge is
	// deleted and re-inserted. Zero means no churn.
	Churn float64
	// Transient is the expected share of all updates, in [0, 1), that
	// insert and then delete a non-edge. Zero means none.
	Transient float64
	// Isolated is the number of vertices, chosen at random, none of whose
	// pairs is a final edge (transient pairs may still touch them). It must
	// be < the number of vertices.
	Isolated int
	// PassUpdates bounds the updates held in memory at once, 8 bytes each.
	// Zero means DefaultPassUpdates. Fewer means more passes over the
	// pairs.
	PassUpdates int
	// Workers is the number of goroutines scanning pairs. Zero means
	// GOMAXPROCS.
	Workers int
	// Logger receives progress at Info level. Nil discards.
	Logger *slog.Logger
	// Format is the stream's format. Zero is stream.FormatBinary, the
	// GraphZeppelin format.
	Format stream.Format
}

// DefaultPassUpdates is the number of updates a pass holds when
// Config.PassUpdates is zero: 1 GiB of them.
const DefaultPassUpdates = 1 << 27

// maxRounds bounds Config.Rounds; a pair then has at most 2·maxRounds+1
// updates.
const maxRounds = 16

// minTimeBits is the fewest bits a record keeps for the update time, which
// limits vertex ids to (64 − 1 − minTimeBits)/2 = 21 bits.
const minTimeBits = 21

// MaxVertices is the largest vertex count the synthetic generators accept:
// 2^21 (their pair scans are quadratic long before that).
const MaxVertices = 1 << ((64 - 1 - minTimeBits) / 2)

// Summary describes a generated stream.
type Summary struct {
	// Model names the generator: "kron" or "erdos".
	Model string `json:"model"`
	// Seed is the seed used.
	Seed uint64 `json:"seed"`
	// Vertices is the number of vertices (the header's count).
	Vertices uint32 `json:"vertices"`
	// Updates is the number of updates written; Inserts + Deletes.
	Updates uint64 `json:"updates"`
	Inserts uint64 `json:"inserts"`
	Deletes uint64 `json:"deletes"`
	// Edges is the number of edges of the final graph.
	Edges uint64 `json:"edges"`
	// Components is the exact number of connected components of the final
	// graph (isolated vertices included), by union-find.
	Components int `json:"components"`
	// Isolated is the number of deliberately isolated vertices.
	Isolated int `json:"isolated_vertices"`
	// ChurnedEdges is the number of final edges deleted and re-inserted at
	// least once; TransientPairs the number of non-edges inserted and
	// deleted at least once.
	ChurnedEdges   uint64 `json:"churned_edges"`
	TransientPairs uint64 `json:"transient_pairs"`
	// Passes is the number of window passes that wrote the stream.
	Passes int `json:"passes"`
	// Scale and Drops describe a Kronecker graph: 2^Scale vertices and the
	// expected number of R-MAT drops of the Poisson model, rounded to the
	// nearest whole drop (a count, not a measurement).
	Scale int    `json:"scale,omitempty"`
	Drops uint64 `json:"drops,omitempty"`
	// Density is the edge probability of an Erdős–Rényi graph, or the
	// target share of pairs that are edges of a Kronecker graph.
	Density float64 `json:"density"`
}

// FieldError reports a configuration field whose value is out of range.
// Validate returns one per problem, joined by errors.Join, so that a
// command can name the field in its own terms (a flag).
type FieldError struct {
	// Field is the field's Go name, for example "Rounds".
	Field string
	// Value is the value found.
	Value any
	// Want states the values allowed, for example "[0, 1]".
	Want string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("streamgen: %s = %v, want %s", e.Field, e.Value, e.Want)
}

// check returns a *FieldError for each problem of c for a model of the
// given vertex count; 0 means unknown (a count out of range), and then
// Isolated is checked only for its sign.
func (c Config) check(vertices uint32) []error {
	var errs []error
	if c.Rounds < 0 || c.Rounds > maxRounds {
		errs = append(errs, &FieldError{"Rounds", c.Rounds, fmt.Sprintf("[1, %d] (0 means 1)", maxRounds)})
	}
	if !(c.Churn >= 0 && c.Churn <= 1) {
		errs = append(errs, &FieldError{"Churn", c.Churn, "[0, 1]"})
	}
	if !(c.Transient >= 0 && c.Transient < 1) {
		errs = append(errs, &FieldError{"Transient", c.Transient, "[0, 1)"})
	}
	if c.Isolated < 0 || (vertices > 0 && int64(c.Isolated) >= int64(vertices)) {
		errs = append(errs, &FieldError{"Isolated", c.Isolated, fmt.Sprintf("[0, %d), fewer than the vertices", vertices)})
	}
	if c.PassUpdates < 0 {
		errs = append(errs, &FieldError{"PassUpdates", c.PassUpdates, ">= 0 (0 means DefaultPassUpdates)"})
	}
	if c.Format > stream.FormatPacked {
		errs = append(errs, &FieldError{"Format", c.Format, "stream.FormatBinary or stream.FormatPacked"})
	}
	if c.Workers < 0 {
		errs = append(errs, &FieldError{"Workers", c.Workers, ">= 0 (0 means GOMAXPROCS)"})
	}
	return errs
}
