package main

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// committed draws the figure of plot i from the committed tables.
func committed(t *testing.T, i int) *figure {
	t.Helper()
	var f *figure
	var err error
	if p := plots[i]; p.draw == nil {
		f, _, err = rssPlot("..")
	} else {
		f, _, err = drawNewest("..", p.pattern, p.draw)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLegendHidesNoPoint: on every committed plot, no point lies under
// a legend entry (the query-latency legend hid kron13's flush at 1,000
// queries).
func TestLegendHidesNoPoint(t *testing.T) {
	for i, p := range plots {
		f := committed(t, i)
		c := draw.New(vgimg.New(figureWidth, plotHeight+f.legendHeight()))
		plotArea, cols := f.layout(c)
		data := f.p.DataCanvas(plotArea)
		x, y := f.p.Transforms(&data)
		for j, l := range f.legends() {
			box := legendBox(l, cols[j])
			for _, s := range f.series {
				for _, pt := range s.pts {
					at := vg.Point{X: x(pt.X), Y: y(pt.Y)}
					if at.X >= box.Min.X && at.X <= box.Max.X && at.Y >= box.Min.Y && at.Y <= box.Max.Y {
						t.Errorf("%s: %s's point %v is under the legend", p.out, s.name, pt)
					}
				}
			}
		}
	}
}

// TestPlotsCurrent fails when a committed plot is not what go run
// ./results/plot draws from the committed tables. Each PNG carries the
// text of what it shows (figure.describe: axes, ticks, series and their
// points), compared everywhere, and the toolchain that drew it: when this
// test runs on that same toolchain, whose rendering is byte-for-byte
// repeatable, the PNGs must be identical too. Another Go release or
// architecture may round pixels or compress differently, so there only
// the description is compared.
func TestPlotsCurrent(t *testing.T) {
	out := t.TempDir()
	if err := drawAll("..", out, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	for _, p := range plots {
		old, err := os.ReadFile(filepath.Join("..", p.out))
		if err != nil {
			t.Fatal(err)
		}
		now, err := os.ReadFile(filepath.Join(out, p.out))
		if err != nil {
			t.Fatal(err)
		}
		was, _ := pngText(old, keyDescription)
		is, _ := pngText(now, keyDescription)
		if was != is {
			t.Errorf("results/%s is stale: run go run ./results/plot and commit it; it shows\n%s\nthe tables give\n%s", p.out, was, is)
			continue
		}
		if by, _ := pngText(old, keyRenderer); by == renderer() && !bytes.Equal(old, now) {
			t.Errorf("results/%s differs from a fresh drawing by the same toolchain (%s): run go run ./results/plot and commit it", p.out, by)
		}
	}
}

// TestPNGText: the text chunks survive a round trip, and a PNG decoder
// still reads the file.
func TestPNGText(t *testing.T) {
	f := committed(t, 1)
	b, err := f.png()
	if err != nil {
		t.Fatal(err)
	}
	b = withText(b, "k1", "über\nzwei", "k2", "")
	if v, ok := pngText(b, "k1"); !ok || v != "über\nzwei" {
		t.Errorf("k1 = %q, %v", v, ok)
	}
	if v, ok := pngText(b, "k2"); !ok || v != "" {
		t.Errorf("k2 = %q, %v", v, ok)
	}
	if _, ok := pngText(b, "k"); ok {
		t.Error("a keyword that is a prefix of another matched")
	}
	if _, err := decodePNG(b); err != nil {
		t.Errorf("with text chunks: %v", err)
	}
	if !strings.Contains(f.describe(), "series \"kron13 flush\"") {
		t.Errorf("description:\n%s", f.describe())
	}
}

func decodePNG(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }

// TestIngestionPlotReadable: the ingestion plot labels every worker
// count it measures or projects at (its log axis labelled only 1 and 10;
// Landscape's published points fall between), and on
// no plot do two series lie within 5% of each other at every point, one
// line hiding the other (the kron13 and kron15 projections did).
func TestIngestionPlotReadable(t *testing.T) {
	f := committed(t, 0)
	labels := map[float64]bool{}
	for _, tk := range f.p.X.Tick.Marker.Ticks(f.p.X.Min, f.p.X.Max) {
		labels[tk.Value] = tk.Label != ""
	}
	for _, s := range f.series {
		for _, pt := range s.pts {
			if !labels[pt.X] && !strings.HasPrefix(s.name, "Landscape") {
				t.Errorf("%s: no label at %v workers", s.name, pt.X)
			}
		}
	}
	for i, p := range plots {
		ss := committed(t, i).series
		for a := range ss {
			for b := a + 1; b < len(ss); b++ {
				if len(mergeClose([]series{ss[a], ss[b]}, 0.05)) == 1 {
					t.Errorf("%s: %q and %q lie within 5%% of each other", p.out, ss[a].name, ss[b].name)
				}
			}
		}
	}
}
