package report

import (
	"fmt"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// WriteSuitePlots draws the recall@K curves of every dataset of a suite into
// one figure, dir/RecallPlot.png and .svg: one panel per model and window set
// (in the order they first appear in runs), in each the cdr@K of rrf (solid)
// and of the best single window by nDCG@10 (dashed) of every dataset, one
// colour per dataset across the panels. Runs without results are left out.
// It returns the paths written.
func WriteSuitePlots(dir string, runs []SuiteRun) ([]string, error) {
	var variants []string
	byVariant := map[string][]SuiteRun{}
	colours := map[string]int{}
	for _, r := range runs {
		if r.Eval == nil {
			continue
		}
		v := r.Variant()
		if byVariant[v] == nil {
			variants = append(variants, v)
		}
		byVariant[v] = append(byVariant[v], r)
		if _, ok := colours[r.Dataset]; !ok {
			colours[r.Dataset] = len(colours)
		}
	}
	if len(variants) == 0 {
		return nil, fmt.Errorf("report: no run of the suite has results to plot")
	}
	var panels []*plot.Plot
	for _, v := range variants {
		p, err := suitePanel(v, byVariant[v], colours)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	return saveTiled(panels, dir, RecallPlot)
}

// suitePanel draws one model and window set.
func suitePanel(variant string, runs []SuiteRun, colours map[string]int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "cdr@K, " + variant
	p.X.Label.Text = "K"
	p.Y.Label.Text = "share of queries with a relevant document in the top K"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	p.Add(plotter.NewGrid())
	var ticks []plot.Tick
	for _, k := range CDRCutoffs {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	for _, r := range runs {
		lines := []struct {
			c      *Config
			dashed bool
		}{{r.Eval.Config("rrf"), false}, {r.Eval.BestWindow("ndcg_cut_10"), true}}
		for _, ln := range lines {
			if ln.c == nil {
				continue
			}
			var xys plotter.XYs
			for _, k := range CDRCutoffs {
				if v, ok := ln.c.mean(fmt.Sprintf("cdr_%d", k)); ok {
					xys = append(xys, plotter.XY{X: float64(k), Y: v})
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("report: plotting %s %s: %w", r.Dataset, ln.c.Name, err)
			}
			n := colours[r.Dataset]
			l.Color, pts.Color, pts.Shape = plotutil.Color(n), plotutil.Color(n), plotutil.Shape(n)
			if ln.dashed {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(l, pts)
			p.Legend.Add(r.Dataset+" "+ln.c.Name, l, pts)
		}
	}
	return p, nil
}

// saveTiled draws the panels side by side into dir/name.png and
// dir/name.svg, each written to a temporary file renamed into place.
func saveTiled(panels []*plot.Plot, dir, name string) ([]string, error) {
	w, h := vg.Length(len(panels))*7*vg.Inch, 5.5*vg.Inch
	var paths []string
	for _, ext := range []string{"png", "svg"} {
		var c vg.CanvasWriterTo
		if ext == "png" {
			c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
		} else {
			c = vgsvg.New(w, h)
		}
		tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Points(18), PadTop: vg.Points(6), PadBottom: vg.Points(6),
			PadLeft: vg.Points(6), PadRight: vg.Points(6)}
		canvases := plot.Align([][]*plot.Plot{panels}, tiles, draw.New(c))
		for i, p := range panels {
			p.Draw(canvases[0][i])
		}
		path := filepath.Join(dir, name+"."+ext)
		if err := writeFile(path, c); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
