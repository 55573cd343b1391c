package streamgen

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErdosConfig configures Erdos.
type ErdosConfig struct {
	// Vertices is the number of vertices, in [2, MaxVertices].
	Vertices uint32
	// Density is the probability, in [0, 1], that a pair is a final edge.
	Density float64
	Config
}

// DefaultErdosConfig returns settings for a test stream: three churn rounds
// deleting and re-inserting 10% of the edges each, 2% transient updates, no
// deliberately isolated vertex.
func DefaultErdosConfig(vertices uint32, density float64, seed uint64) ErdosConfig {
	return ErdosConfig{Vertices: vertices, Density: density, Config: Config{
		Seed: seed, Rounds: 3, Churn: 0.1, Transient: 0.02,
	}}
}

// Validate reports every problem of c at once: a *FieldError for each
// field out of range, joined by errors.Join.
func (c ErdosConfig) Validate() error {
	var errs []error
	vertices := c.Vertices
	if vertices < 2 || vertices > MaxVertices {
		errs = append(errs, &FieldError{"Vertices", c.Vertices, fmt.Sprintf("[2, %d]", MaxVertices)})
		vertices = 0 // unknown
	}
	errs = append(errs, c.check(vertices)...)
	if !(c.Density >= 0 && c.Density <= 1) {
		errs = append(errs, &FieldError{"Density", c.Density, "[0, 1]"})
	}
	return errors.Join(errs...)
}

// Erdos writes a dynamic stream whose final graph is a G(n, p) random graph
// (each pair an edge independently with probability Density) to out
// (in cfg.Format: binary or packed) and, if cum is not nil, the final edge set to cum
// (untyped text format). Labels are randomly permuted. See the package doc
// for the stream's shape. It returns the summary, cfg.Validate's error, an
// error from the writers, or ctx.Err().
func Erdos(ctx context.Context, cfg ErdosConfig, out, cum io.Writer) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	g := newPairGen(erdosModel(cfg), cfg.Config)
	s, err := g.generate(ctx, "erdos", out, cum)
	s.Seed, s.Density = cfg.Seed, cfg.Density
	return s, err
}

// erdosModel returns the model of cfg's graph: every class has the
// density.
func erdosModel(cfg ErdosConfig) modelParams {
	b := idBitsFor(cfg.Vertices)
	classes := make([]float64, (b+1)*(b+1))
	for i := range classes {
		classes[i] = cfg.Density
	}
	v := float64(cfg.Vertices)
	return modelParams{name: "erdos", vertices: cfg.Vertices, idBits: b, classes: classes,
		expectedEdges: cfg.Density * v * (v - 1) / 2, uniform: true}
}
