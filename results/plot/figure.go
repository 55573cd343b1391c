package main

import (
	"bytes"
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Every figure is 18 cm wide; its plot is 12 cm high, and its legend goes
// in a strip below it, in legendColumns columns, so that no entry can hide
// a point, whatever the data.
const (
	figureWidth   = 18 * vg.Centimeter
	plotHeight    = 12 * vg.Centimeter
	legendColumns = 2
)

// series is one named line of points.
type series struct {
	name string
	pts  plotter.XYs
}

// figure is a plot, its series, styled as plotutil.AddLinePoints does,
// and their legend entries, drawn below the plot rather than over it.
type figure struct {
	p      *plot.Plot
	series []series
	thumbs [][]plot.Thumbnailer
}

// newFigure adds the series to p, the i-th with plotutil's i-th colour,
// dashes and glyph shape.
func newFigure(p *plot.Plot, ss []series) (*figure, error) {
	f := &figure{p: p, series: ss}
	for i, s := range ss {
		l, sc, err := plotter.NewLinePoints(s.pts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		l.Color, l.Dashes = plotutil.Color(i), plotutil.Dashes(i)
		sc.Color, sc.Shape = plotutil.Color(i), plotutil.Shape(i)
		p.Add(l, sc)
		f.thumbs = append(f.thumbs, []plot.Thumbnailer{l, sc})
	}
	return f, nil
}

// legends returns the figure's legend columns, entries in order, column
// by column.
func (f *figure) legends() []plot.Legend {
	rows := (len(f.series) + legendColumns - 1) / legendColumns
	var ls []plot.Legend
	for i, s := range f.series {
		if i%rows == 0 {
			l := plot.NewLegend()
			l.Top, l.Left, l.Padding = true, true, vg.Points(3)
			ls = append(ls, l)
		}
		ls[len(ls)-1].Add(s.name, f.thumbs[i]...)
	}
	return ls
}

// legendHeight is the height of the strip below the plot.
func (f *figure) legendHeight() vg.Length {
	var h vg.Length
	for _, l := range f.legends() {
		h = max(h, l.Rectangle(draw.Canvas{}).Size().Y)
	}
	return h + vg.Centimeter/2
}

// layout returns, on c (figureWidth × plotHeight + legendHeight), the area
// of the plot and the area of each legend column, below it.
func (f *figure) layout(c draw.Canvas) (draw.Canvas, []draw.Canvas) {
	strip := f.legendHeight()
	plotArea := draw.Crop(c, 0, 0, strip, 0)
	colWidth := c.Size().X / legendColumns
	var cols []draw.Canvas
	for i := range f.legends() {
		col := c
		col.Min.X = c.Min.X + vg.Length(i)*colWidth + vg.Centimeter
		col.Max.X = c.Min.X + vg.Length(i+1)*colWidth
		col.Max.Y = c.Min.Y + strip - vg.Centimeter/4
		cols = append(cols, col)
	}
	return plotArea, cols
}

// legendBox is the box that Draw fills with l, a top-left legend, on col.
func legendBox(l plot.Legend, col draw.Canvas) vg.Rectangle {
	size := l.Rectangle(col).Size()
	return vg.Rectangle{Min: vg.Point{X: col.Min.X, Y: col.Max.Y - size.Y}, Max: vg.Point{X: col.Min.X + size.X, Y: col.Max.Y}}
}

// png renders the figure as a PNG at 96 dots per inch.
func (f *figure) png() ([]byte, error) {
	img := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figureWidth, plotHeight+f.legendHeight()), vgimg.UseDPI(96))}
	c := draw.New(img)
	plotArea, cols := f.layout(c)
	f.p.Draw(plotArea)
	for i, l := range f.legends() {
		l.Draw(cols[i])
	}
	var b bytes.Buffer
	if _, err := img.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// describe returns what the figure shows, in text: the title, each axis's
// label, range and tick labels, and each series' name and points. It
// changes when a table or a choice of the drawing code changes what the
// figure says; two renderings of one description differ at most in their
// pixels' rounding.
func (f *figure) describe() string {
	var b strings.Builder
	p := f.p
	fmt.Fprintf(&b, "title %q\n", p.Title.Text)
	for _, ax := range []struct {
		name string
		a    *plot.Axis
	}{{"x", &p.X}, {"y", &p.Y}} {
		fmt.Fprintf(&b, "%s axis %q %T [%.4g, %.4g] ticks", ax.name, ax.a.Label.Text, ax.a.Scale, ax.a.Min, ax.a.Max)
		for _, t := range ax.a.Tick.Marker.Ticks(ax.a.Min, ax.a.Max) {
			if t.Label != "" {
				fmt.Fprintf(&b, " %s", t.Label)
			}
		}
		b.WriteString("\n")
	}
	for _, s := range f.series {
		fmt.Fprintf(&b, "series %q", s.name)
		for _, pt := range s.pts {
			fmt.Fprintf(&b, " (%.4g, %.4g)", pt.X, pt.Y)
		}
		b.WriteString("\n")
	}
	return b.String()
}
