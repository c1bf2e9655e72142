package report

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/msrag/msrag/internal/safefile"
)

// Plot file names, without extension; each is written as .png and .svg.
const (
	RecallPlot = "recall_at_k"
	OraclePlot = "oracle_best_window"
)

// WritePlots draws into dir the recall@K curves (cdr_K against K for every
// single window, RRF over all windows, the default hybrid, the learned and
// transferred fusions and the oracle, or every configuration when the run
// has none of those), with the legend beside the plotting area, and, when
// e has an oracle, the histogram of the best window per query. It returns
// the paths written.
func WritePlots(dir string, e *Eval) ([]string, error) {
	var paths []string
	p, legend, err := recallPlot(e)
	if err != nil {
		return nil, err
	}
	ps, err := saveFigure(legendBeside(p, legend), 11*vg.Inch, 5*vg.Inch, dir, RecallPlot)
	if err != nil {
		return nil, err
	}
	paths = append(paths, ps...)
	if e.Oracle != nil {
		p, err := oraclePlot(e)
		if err != nil {
			return nil, err
		}
		ps, err := save(p, dir, OraclePlot)
		if err != nil {
			return nil, err
		}
		paths = append(paths, ps...)
	}
	return paths, nil
}

// recallPlot draws the recall@K curves and returns them with their legend,
// which the caller places (legendBeside).
func recallPlot(e *Eval) (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (%s): correct-document recall@K, %s", e.Dataset, e.Split, e.Model.Name)
	p.X.Label.Text = "K"
	p.Y.Label.Text = "share of queries with a relevant document in the top K"
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	var ticks []plot.Tick
	for _, k := range CDRCutoffs {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	n := 0
	for _, c := range plotted(e) {
		var xys plotter.XYs
		for _, k := range CDRCutoffs {
			if v, ok := c.mean(fmt.Sprintf("cdr_%d", k)); ok {
				xys = append(xys, plotter.XY{X: float64(k), Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("report: plotting %s: %w", c.Name, err)
		}
		l.Color = plotutil.Color(n)
		pts.Color = plotutil.Color(n)
		pts.Shape = plotutil.Shape(n)
		label := c.label()
		switch curveStyle(e, c) {
		case styleUpperBound:
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		case styleDefault:
			l.Width, l.Color, pts.Color = vg.Points(3), color.Black, color.Black
			label += " (default hybrid)"
		case styleLearned:
			l.Width = vg.Points(2)
			l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		}
		p.Add(l, pts)
		legend.Add(label, l, pts)
		n++
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("report: no configuration of %s has cdr_K values to plot", e.Dataset)
	}
	return p, &legend, nil
}

// A curve's style says what kind of line a configuration is drawn with.
type style int

const (
	stylePlain      style = iota // a window, a fusion rule: thin and solid
	styleDefault                 // msrag's default hybrid: thick, solid and black
	styleLearned                 // a learned or transferred fusion: thick and dotted
	styleUpperBound              // the oracle: dashed
)

func curveStyle(e *Eval, c *Config) style {
	switch {
	case c.UpperBound:
		return styleUpperBound
	case e.DefaultHybrid != "" && c.Name == e.DefaultHybrid:
		return styleDefault
	case c.Kind == KindLearned:
		return styleLearned
	}
	return stylePlain
}

// legendBeside draws p with legend to the right of it, outside the plotting
// area, its top level with the top of the figure below the title.
func legendBeside(p *plot.Plot, legend *plot.Legend) func(draw.Canvas) {
	return func(dc draw.Canvas) {
		pad := 3 * vg.Millimeter
		r := legend.Rectangle(dc)
		w := r.Max.X - r.Min.X + 2*pad
		p.Draw(draw.Crop(dc, 0, -w, 0, 0))
		top := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
		legend.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-w+pad, 0, 0, -top))
	}
}

// plotted returns the configurations the recall curves draw: every single
// window, rrf, the default hybrid, the learned and transferred fusions and
// the oracle, or every configuration when the run has none of those.
func plotted(e *Eval) []*Config {
	var some, all []*Config
	for i := range e.Configs {
		c := &e.Configs[i]
		all = append(all, c)
		if c.Kind == KindWindow || c.Name == "rrf" || c.Kind == KindOracle || curveStyle(e, c) != stylePlain {
			some = append(some, c)
		}
	}
	if len(some) == 0 {
		return all
	}
	return some
}

func oraclePlot(e *Eval) (*plot.Plot, error) {
	o := e.Oracle
	counts, ties, err := o.Picks(o.HistogramMetric)
	if err != nil {
		return nil, err
	}
	vals := make(plotter.Values, 0, len(counts)+1)
	for _, c := range counts {
		vals = append(vals, float64(c))
	}
	vals = append(vals, float64(ties))
	names := append(append([]string(nil), o.Over...), "all equal")
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (%s): best window per query by %s", e.Dataset, e.Split, metricLabel(o.HistogramMetric))
	p.Y.Label.Text = "queries"
	p.X.Label.Text = "window"
	bars, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return nil, fmt.Errorf("report: oracle histogram: %w", err)
	}
	bars.Color = plotutil.Color(0)
	p.Add(bars)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min = 0
	return p, nil
}

// save writes p as dir/name.png and dir/name.svg, each to a temporary file
// renamed into place.
func save(p *plot.Plot, dir, name string) ([]string, error) {
	return saveFigure(p.Draw, 8*vg.Inch, 5*vg.Inch, dir, name)
}

// saveFigure writes what fig draws on a w by h canvas as dir/name.png and
// dir/name.svg, each to a temporary file renamed into place.
func saveFigure(fig func(draw.Canvas), w, h vg.Length, dir, name string) ([]string, error) {
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		wt, err := draw.NewFormattedCanvas(w, h, ext)
		if err != nil {
			return nil, fmt.Errorf("report: %s.%s: %w", name, ext, err)
		}
		fig(draw.New(wt))
		path := filepath.Join(dir, name+"."+ext)
		if err := writeFile(path, wt); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeFile writes wt to path through safefile: never half-written, mode 0644.
func writeFile(path string, wt io.WriterTo) error {
	_, err := safefile.Write(path, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}
