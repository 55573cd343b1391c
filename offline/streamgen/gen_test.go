package streamgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"slices"
	"testing"

	"sketchcc/offline/edgelist"
	"sketchcc/offline/replay"
	"sketchcc/stream"
)

func requireNoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkGenerated checks a generated stream against its cumulative file and
// its summary: the stream is well formed, its final edge set equals the
// cumulative file's, and the summary's counts and components equal those
// recomputed by a plain union-find over the cumulative file.
func checkGenerated(t *testing.T, s Summary, out, cum []byte) {
	t.Helper()
	r, err := stream.NewReader(bytes.NewReader(out))
	requireNoError(t, err)
	if int64(len(out)) != stream.RecordOffset(r.Header().Updates) {
		t.Fatalf("stream is %d bytes, header promises %d updates", len(out), r.Header().Updates)
	}
	res, set, err := replay.Run(r, replay.Config{Strict: true, Name: "generated"})
	requireNoError(t, err)

	tr, err := stream.NewTextReader(bytes.NewReader(cum), "cum", false)
	requireNoError(t, err)
	if tr.Header().Vertices != s.Vertices {
		t.Fatalf("cumulative file has %d vertices, summary %d", tr.Header().Vertices, s.Vertices)
	}
	var cumEdges []stream.Edge
	buf := make([]stream.Update, 1024)
	for {
		n, err := tr.Read(buf)
		for _, u := range buf[:n] {
			cumEdges = append(cumEdges, stream.Edge{Src: min(u.Src, u.Dst), Dst: max(u.Src, u.Dst)})
		}
		if err != nil {
			break
		}
	}
	slices.SortFunc(cumEdges, func(a, b stream.Edge) int {
		return int(int64(a.Src)<<32 + int64(a.Dst) - (int64(b.Src)<<32 + int64(b.Dst)))
	})
	if !slices.Equal(slices.Collect(set.All()), cumEdges) {
		t.Fatalf("final edge set of the stream (%d edges) differs from the cumulative file (%d)",
			set.Len(), len(cumEdges))
	}
	want := edgelist.Components(s.Vertices, cumEdges)
	if s.Components != want || res.Components != want {
		t.Fatalf("summary says %d components, replay %d, union-find over the cumulative file %d",
			s.Components, res.Components, want)
	}
	if res.Updates != s.Updates || res.Inserts != s.Inserts || res.Deletes != s.Deletes ||
		uint64(res.Edges) != s.Edges || s.Inserts-s.Deletes != s.Edges {
		t.Fatalf("summary %+v, replay %+v", s, res)
	}
}

func TestKron_Scale10(t *testing.T) {
	cfg := DefaultKronConfig(10, 42)
	var out, cum bytes.Buffer
	s, err := Kron(context.Background(), cfg, &out, &cum)
	requireNoError(t, err)
	t.Logf("%+v", s)
	checkGenerated(t, s, out.Bytes(), cum.Bytes())
	pairs := float64(s.Vertices) * float64(s.Vertices-1) / 2
	if d := float64(s.Edges) / pairs; d < 0.45 || d > 0.51 {
		t.Errorf("edge density %.3f, want about 0.5", d)
	}
	// Deliberately isolated vertices are components of their own.
	if s.Isolated != DefaultIsolated(10) || s.Components <= s.Isolated {
		t.Errorf("%d isolated, %d components", s.Isolated, s.Components)
	}
	if s.ChurnedEdges == 0 || s.TransientPairs == 0 || s.Deletes != s.ChurnedEdges+s.TransientPairs {
		t.Errorf("churned %d, transient %d, deletes %d", s.ChurnedEdges, s.TransientPairs, s.Deletes)
	}
	// Transient updates are about 2% of the stream.
	if f := 2 * float64(s.TransientPairs) / float64(s.Updates); math.Abs(f-0.02) > 0.004 {
		t.Errorf("transient share %.4f, want about 0.02", f)
	}
}

// TestKron_Deterministic checks that the output depends on the seed only,
// not on the number of workers or passes.
func TestKron_Deterministic(t *testing.T) {
	gen := func(seed uint64, workers, passUpdates int) (Summary, [32]byte, [32]byte) {
		cfg := DefaultKronConfig(8, seed)
		cfg.Workers, cfg.PassUpdates = workers, passUpdates
		var out, cum bytes.Buffer
		s, err := Kron(context.Background(), cfg, &out, &cum)
		requireNoError(t, err)
		return s, sha256.Sum256(out.Bytes()), sha256.Sum256(cum.Bytes())
	}
	s1, o1, c1 := gen(7, 1, 0)
	s2, o2, c2 := gen(7, 3, 5000)
	if o1 != o2 || c1 != c2 {
		t.Fatal("output depends on workers or pass size")
	}
	if s2.Passes < 3 {
		t.Fatalf("%d passes with a small pass budget, want several", s2.Passes)
	}
	s1.Passes, s2.Passes = 0, 0
	if s1 != s2 {
		t.Fatalf("summaries differ: %+v %+v", s1, s2)
	}
	if _, o3, _ := gen(8, 1, 0); o3 == o1 {
		t.Fatal("seed does not change the stream")
	}
}

func TestKronModel(t *testing.T) {
	// The expected number of edges hits the target, and the probabilities
	// follow the initiator: the pair of all-zero bits is most likely.
	m := kronModel(13, 0.5)
	v := 8192.0
	if got := m.expectedEdges / (v * (v - 1) / 2); math.Abs(got-0.5) > 1e-9 {
		t.Fatalf("expected density %v", got)
	}
	n := 13
	top := m.classes[0*(n+1)+1] // k11 = 0, one differing bit
	bottom := m.classes[12*(n+1)+1]
	if !(top > 0.99 && bottom < 0.01) {
		t.Fatalf("class probabilities %v .. %v", top, bottom)
	}
}

func TestErdos(t *testing.T) {
	for _, tc := range []struct {
		vertices uint32
		density  float64
	}{{300, 0.1}, {1000, 0.01}, {50, 1}, {2, 1}} {
		cfg := DefaultErdosConfig(tc.vertices, tc.density, 3)
		var out, cum bytes.Buffer
		s, err := Erdos(context.Background(), cfg, &out, &cum)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		checkGenerated(t, s, out.Bytes(), cum.Bytes())
		pairs := float64(tc.vertices) * float64(tc.vertices-1) / 2
		if tc.density == 1 && s.Edges != uint64(pairs) {
			t.Errorf("density 1: %d edges of %v pairs", s.Edges, pairs)
		}
		if pairs > 1000 {
			if d := float64(s.Edges) / pairs; math.Abs(d-tc.density) > 0.1*tc.density {
				t.Errorf("%+v: density %.4f", tc, d)
			}
			if s.ChurnedEdges == 0 || (s.TransientPairs == 0) != (tc.density == 1) {
				t.Errorf("%+v: no churn (%d) or transient pairs (%d)", tc, s.ChurnedEdges, s.TransientPairs)
			}
		}
	}
}

func TestConfig_Validate(t *testing.T) {
	bad := []struct {
		cfg    ErdosConfig
		fields []string
	}{
		{ErdosConfig{Vertices: 1, Density: 0.5}, []string{"Vertices"}},
		{ErdosConfig{Vertices: 10, Density: 1.5}, []string{"Density"}},
		{ErdosConfig{Vertices: 10, Density: 0.5, Config: Config{Churn: -1}}, []string{"Churn"}},
		{ErdosConfig{Vertices: 10, Density: 0.5, Config: Config{Transient: 1}}, []string{"Transient"}},
		{ErdosConfig{Vertices: 10, Density: 0.5, Config: Config{Rounds: 99}}, []string{"Rounds"}},
		{ErdosConfig{Vertices: 10, Density: 0.5, Config: Config{Isolated: 10}}, []string{"Isolated"}},
		{ErdosConfig{Vertices: 10, Density: 0.5, Config: Config{PassUpdates: -1, Workers: -1}}, []string{"PassUpdates", "Workers"}},
		// Every problem at once, with a vertex count out of range.
		{ErdosConfig{Vertices: 1, Density: -1, Config: Config{Rounds: -1, Isolated: -1}}, []string{"Vertices", "Rounds", "Isolated", "Density"}},
	}
	for _, tc := range bad {
		var fields []string
		for _, err := range tc.cfg.Validate().(interface{ Unwrap() []error }).Unwrap() {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%+v: %v is not a *FieldError", tc.cfg, err)
			}
			fields = append(fields, fe.Field)
		}
		if !slices.Equal(fields, tc.fields) {
			t.Errorf("%+v: problems with %q, want %q", tc.cfg, fields, tc.fields)
		}
		if _, err := Erdos(context.Background(), tc.cfg, &bytes.Buffer{}, nil); err == nil {
			t.Errorf("%+v: Erdos ran", tc.cfg)
		}
	}
	err := KronConfig{Scale: 1, Density: 0.5}.Validate()
	if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field != "Scale" || err.Error() != "streamgen: Scale = 1, want [2, 20]" {
		t.Errorf("scale 1: %v, want a *FieldError for Scale", err)
	}
	if _, err := Kron(context.Background(), KronConfig{Scale: 1, Density: 0.5}, &bytes.Buffer{}, nil); err == nil {
		t.Error("scale 1: no error")
	}
	// A graph with no update at all cannot be a stream.
	if _, err := Erdos(context.Background(), ErdosConfig{Vertices: 10}, &bytes.Buffer{}, nil); err == nil {
		t.Error("empty stream: no error")
	}
}

func TestKron_Cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Kron(ctx, DefaultKronConfig(10, 1), &bytes.Buffer{}, nil); err == nil {
		t.Fatal("cancelled context: no error")
	}
}
