package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/msrag/msrag/eval"
)

// CDRCutoffs are the K of the correct-document recall table and plot.
var CDRCutoffs = []int{1, 2, 3, 5, 10}

// wideMetrics are the columns of the table of every configuration.
var wideMetrics = []string{"ndcg_cut_10", "map_cut_10", "mrr_10", "recall_10", "recall_100", "recall_1000"}

// pct formats a mean as a percentage with two decimals.
func pct(v float64) string { return fmt.Sprintf("%.2f", 100*v) }

// mean returns a configuration's mean of metric and whether it has one.
func (c *Config) mean(metric string) (float64, bool) {
	if c == nil {
		return 0, false
	}
	v, ok := c.Results.Mean[metric]
	return v, ok
}

// cell formats a configuration's mean of metric, or a dash.
func (c *Config) cell(metric string) string {
	if v, ok := c.mean(metric); ok {
		return pct(v)
	}
	return "—"
}

// label is a configuration's name in tables: the oracle says it is an upper bound.
func (c *Config) label() string {
	if c.UpperBound {
		return c.Name + " (upper bound)"
	}
	return c.Name
}

// BestWindow returns the single-window configuration with the highest mean
// of metric (the first on a tie), or nil when there is none.
func (e *Eval) BestWindow(metric string) *Config {
	return e.bestOf(metric, func(c *Config) bool { return c.Kind == KindWindow })
}

// cdrMetrics returns the cdr_K names of CDRCutoffs that some configuration has.
func (e *Eval) cdrMetrics() []string {
	var out []string
	for _, k := range CDRCutoffs {
		name := fmt.Sprintf("cdr_%d", k)
		for i := range e.Configs {
			if _, ok := e.Configs[i].Results.Mean[name]; ok {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// metricLabel turns ndcg_cut_10 into nDCG@10 and the like (eval.Family.Label).
func metricLabel(m string) string {
	pm, err := eval.ParseMetric(m)
	if err != nil || pm.Family == eval.RecipRank {
		return m
	}
	return pm.Family.Label() + "@" + strconv.Itoa(pm.K)
}

type table struct {
	head  []string
	right []bool
	rows  [][]string
}

func (t *table) write(w io.Writer) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(t.head, " | "))
	seps := make([]string, len(t.head))
	for i := range seps {
		seps[i] = "---"
		if i < len(t.right) && t.right[i] {
			seps[i] = "---:"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// naiveTable is nDCG@10 of RRF against the best single channel, kind by
// kind, so that no row subtracts one kind from another: the dense RRF
// against the best dense window (and the full document beside them), the
// lexical RRF against the best lexical channel, and RRF over both kinds
// against the best single channel of either, labelled as such. A kind the
// run lacks has no row.
func (e *Eval) naiveTable() *table {
	const m = "ndcg_cut_10"
	t := &table{
		head:  []string{"dataset", "queries", "channels", "best single channel", "nDCG@10 best", "nDCG@10 full", "rrf", "nDCG@10 rrf", "rrf − best"},
		right: []bool{false, true, false, false, true, true, false, true, true},
	}
	for _, k := range channelKinds {
		best := e.bestOf(m, func(c *Config) bool { return c.Kind == KindWindow && (k == ChannelsHybrid || c.channels() == k) })
		rrf := e.rrfOf(k)
		if rrf == nil && (best == nil || k == ChannelsHybrid) {
			continue
		}
		label, full := k, "—"
		switch k {
		case ChannelsDense:
			full = e.Config("full").cell(m)
		case ChannelsHybrid:
			label = "hybrid, against the best single channel of either kind"
		}
		bestName, rrfName, delta := "—", "—", "—"
		if best != nil {
			bestName = best.Name
		}
		if rrf != nil {
			rrfName = rrf.Name
		}
		if bv, ok := best.mean(m); ok {
			if rv, ok := rrf.mean(m); ok {
				delta = fmt.Sprintf("%+.2f", 100*(rv-bv))
			}
		}
		t.rows = append(t.rows, []string{e.Dataset, fmt.Sprint(e.Queries), label, bestName, best.cell(m), full, rrfName, rrf.cell(m), delta})
	}
	return t
}

// rrfOf is the run's RRF over the channels of kind k: rrf over the dense
// windows, rrf:windows=lexical (or, in a run without a model, rrf) over the
// lexical channels, rrf:windows=all over both; nil when the run has none.
func (e *Eval) rrfOf(k string) *Config {
	for _, name := range []string{"rrf", LexicalRRF, "rrf:windows=all"} {
		if c := e.Config(name); c != nil && c.channels() == k {
			return c
		}
	}
	return nil
}

// channels is the kind of channel c ranks from; a run written before
// results recorded it had dense channels only.
func (c *Config) channels() string {
	if c.Channels == "" {
		return ChannelsDense
	}
	return c.Channels
}

// cdrTable is correct-document recall at K for every configuration.
func (e *Eval) cdrTable() *table {
	ms := e.cdrMetrics()
	t := &table{head: []string{"configuration"}, right: []bool{false}}
	for _, m := range ms {
		t.head = append(t.head, metricLabel(m))
		t.right = append(t.right, true)
	}
	for i := range e.Configs {
		c := &e.Configs[i]
		row := []string{c.label()}
		for _, m := range ms {
			row = append(row, c.cell(m))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

func (e *Eval) header(w io.Writer) {
	fmt.Fprintf(w, "# %s (%s split): multi-scale retrieval with %s\n\n", e.Dataset, e.Split, e.Model.Name)
	full := "none"
	if e.FullWindow > 0 {
		full = fmt.Sprintf("%d tokens (documents truncated to the model's maximum)", e.FullWindow)
	}
	fmt.Fprintf(w, "%d queries, %d documents; windows %s tokens; full-document window: %s; "+
		"%d chunks per window, %d documents per query; rrf is RRF over every window with c = 1 and ranks from 0 "+
		"unless its name says otherwise.\n\n",
		e.Queries, e.Docs, joinInts(e.Windows), full, e.ChannelK, e.K)
	if l := e.Late; l != nil {
		fmt.Fprintf(w, "Late chunking: each document encoded once, in segments of %d content tokens sharing %d, "+
			"every window's vector the mean of its tokens' vectors from that pass (edges %s).\n\n", l.SegmentTokens, l.Overlap, l.Edges)
	}
	if e.Model.Name == hashEmbedderName {
		fmt.Fprintf(w, "**%s is a non-semantic test embedder: these numbers say nothing about retrieval quality.**\n\n", hashEmbedderName)
	}
}

// hashEmbedderName is msrag.HashEmbedderName (not imported: report stays free of cgo).
const hashEmbedderName = "hash-test-embedder"

// WriteSummary writes the header and the first two tables of the report.
func WriteSummary(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	e.header(bw)
	e.naiveTable().write(bw)
	if e.hasLexical() {
		e.kindsTable().write(bw)
	}
	e.cdrTable().write(bw)
	return bw.Flush()
}

// WriteMarkdown writes report.md.
func WriteMarkdown(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	e.header(bw)
	fmt.Fprintf(bw, "Values are means over the scored queries, times 100.\n\n")

	fmt.Fprintf(bw, "## Naive vs RRF (nDCG@10)\n\n")
	fmt.Fprintf(bw, "Each kind of channel against its own RRF: the best single channel is the one of that kind "+
		"with the highest mean nDCG@10 (chosen after the fact, so it flatters the naive choice); the hybrid row sets "+
		"RRF over both kinds against the best single channel of either. full embeds each document whole, "+
		"truncated to the model's maximum length, as MTEB does.\n\n")
	e.naiveTable().write(bw)

	fmt.Fprintf(bw, "## Correct-document recall@K\n\n")
	fmt.Fprintf(bw, "cdr@K is the share of queries with at least one relevant document in the top K.")
	if e.Oracle != nil {
		fmt.Fprintf(bw, " The oracle picks, per query and per metric, the best of %s using the relevance "+
			"labels: an upper bound on choosing one window size per query, not a retrieval method.", strings.Join(e.Oracle.Over, ", "))
	}
	fmt.Fprintf(bw, "\n\n")
	e.cdrTable().write(bw)
	if o := e.Config("oracle"); o != nil {
		if best := e.BestWindow("cdr_1"); best != nil {
			bv, _ := best.mean("cdr_1")
			ov, _ := o.mean("cdr_1")
			if bv > 0 {
				fmt.Fprintf(bw, "The oracle's cdr@1 is %s, %+.1f%% relative to the best single window (%s, %s).\n\n",
					pct(ov), 100*(ov-bv)/bv, best.Name, pct(bv))
			}
		}
	}

	if err := e.writeOracle(bw); err != nil {
		return err
	}
	e.writeKinds(bw)
	e.writePaired(bw)

	fmt.Fprintf(bw, "## All configurations\n\n")
	t := &table{head: []string{"configuration", "queries"}, right: []bool{false, true}}
	for _, m := range wideMetrics {
		t.head = append(t.head, metricLabel(m))
		t.right = append(t.right, true)
	}
	for i := range e.Configs {
		c := &e.Configs[i]
		row := []string{c.label(), fmt.Sprint(c.Results.NumQueries)}
		for _, m := range wideMetrics {
			row = append(row, c.cell(m))
		}
		t.rows = append(t.rows, row)
	}
	t.write(bw)
	if e.K < 1000 {
		fmt.Fprintf(bw, "Each query ranks %d documents, so metrics at 1000 only count those (run with --k 1000 for MTEB's @1000).\n\n", e.K)
	}

	e.writeRun(bw)
	return bw.Flush()
}

// writePaired writes every configuration's paired differences from the best
// window and from rrf.
func (e *Eval) writePaired(bw io.Writer) {
	if e.PairedMetric == "" {
		return
	}
	m := metricLabel(e.PairedMetric)
	best := e.BestWindow(e.PairedMetric)
	fmt.Fprintf(bw, "## Paired comparisons (%s)\n\n", m)
	fmt.Fprintf(bw, "Per configuration, the mean difference in %s from the best single window", m)
	if best != nil {
		fmt.Fprintf(bw, " (%s, chosen after the fact, which flatters it)", best.Name)
	}
	fmt.Fprintf(bw, " and from rrf, over the same queries, with a 95%% paired bootstrap interval "+
		"(10,000 resamplings of the queries) and the queries it wins, ties and loses.\n\n")
	t := &table{head: []string{"configuration", "− best window", "95% interval", "win/tie/loss", "− rrf", "95% interval", "win/tie/loss"},
		right: []bool{false, true, true, true, true, true, true}}
	for i := range e.Configs {
		c := &e.Configs[i]
		t.rows = append(t.rows, append([]string{c.label()}, c.pairedCells(PairedBestWindow, PairedRRF)...))
	}
	t.write(bw)
}

// hasLexical reports whether the run has a lexical configuration.
func (e *Eval) hasLexical() bool {
	return slices.ContainsFunc(e.Configs, func(c Config) bool { return c.Channels == ChannelsLexical })
}

// channelKinds are the kinds of channel in the order reports show them.
var channelKinds = []string{ChannelsDense, ChannelsLexical, ChannelsHybrid}

// kindsTable sets each kind of channel (and both) side by side: its best
// single channel (after the fact), its RRF and its oracle.
func (e *Eval) kindsTable() *table {
	const m = "ndcg_cut_10"
	rrfs := map[string]string{ChannelsDense: "rrf", ChannelsLexical: LexicalRRF, ChannelsHybrid: "rrf:windows=all"}
	oracles := map[string]string{ChannelsDense: KindOracle + ":dense", ChannelsLexical: KindOracle + ":lexical", ChannelsHybrid: KindOracle}
	t := &table{head: []string{"channels", "best single channel", "rrf", "oracle (upper bound)"}, right: []bool{false, true, true, true}}
	if e.DefaultHybrid != "" && e.DefaultHybrid != rrfs[ChannelsHybrid] {
		t.head, t.right = append(t.head, "default hybrid"), append(t.right, true)
	}
	for _, k := range channelKinds {
		best := e.bestOf(m, func(c *Config) bool { return c.Kind == KindWindow && (k == ChannelsHybrid || c.Channels == k) })
		bestCell := "—"
		if best != nil {
			bestCell = best.cell(m) + " (" + best.Name + ")"
		}
		rrfCell := "—"
		if r := e.Config(rrfs[k]); r != nil {
			rrfCell = r.cell(m) + " (" + r.Name + ")"
		}
		row := []string{k, bestCell, rrfCell, e.Config(oracles[k]).cell(m)}
		if len(t.head) > len(row) {
			row = append(row, "—")
			if k == ChannelsHybrid {
				row[len(row)-1] = e.Config(e.DefaultHybrid).cell(m) + " (" + e.DefaultHybrid + ")"
			}
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// writeKinds writes, for a run with lexical channels, dense-only,
// lexical-only and hybrid side by side (kindsTable), then every
// configuration against each kind's RRF.
func (e *Eval) writeKinds(bw io.Writer) {
	if !e.hasLexical() {
		return
	}
	const m = "ndcg_cut_10"
	fmt.Fprintf(bw, "## Dense, lexical and hybrid (%s)\n\n", metricLabel(m))
	fmt.Fprintf(bw, "Each kind of channel alone and both together: the best single channel of the kind (chosen after "+
		"the fact), RRF over the kind's channels and the oracle over them (an upper bound).\n\n")
	e.kindsTable().write(bw)
	fmt.Fprintf(bw, "Every configuration against RRF over the dense windows (rrf) and over the lexical channels (%s): "+
		"mean difference, 95%% paired bootstrap interval, queries won/tied/lost.\n\n", LexicalRRF)
	t := &table{head: []string{"configuration", "channels", metricLabel(m), "− rrf", "95% interval", "win/tie/loss", "− " + LexicalRRF, "95% interval", "win/tie/loss"},
		right: []bool{false, false, true, true, true, true, true, true, true}}
	for _, k := range channelKinds {
		for i := range e.Configs {
			if c := &e.Configs[i]; c.Channels == k {
				row := []string{c.label(), c.Channels, c.cell(m)}
				t.rows = append(t.rows, append(row, c.pairedCells(PairedRRF, PairedLexicalRRF)...))
			}
		}
	}
	t.write(bw)
}

// bestOf returns the configuration of those keep accepts with the highest
// mean of metric (the first on a tie), or nil.
func (e *Eval) bestOf(metric string, keep func(*Config) bool) *Config {
	var best *Config
	for i := range e.Configs {
		c := &e.Configs[i]
		v, ok := c.mean(metric)
		if !ok || !keep(c) {
			continue
		}
		if b, _ := best.mean(metric); best == nil || v > b {
			best = c
		}
	}
	return best
}

// pairedCells formats the configuration's paired comparisons with the
// baselines: difference, interval, win/tie/loss, or dashes.
func (c *Config) pairedCells(baselines ...string) []string {
	var row []string
	for _, b := range baselines {
		p, ok := c.Paired[b]
		if !ok {
			row = append(row, "—", "—", "—")
			continue
		}
		row = append(row, fmt.Sprintf("%+.2f", 100*p.Diff), fmt.Sprintf("[%+.2f, %+.2f]", 100*p.Lo, 100*p.Hi),
			fmt.Sprintf("%d/%d/%d", p.Wins, p.Ties, p.Losses))
	}
	return row
}

// writeOracle writes the histogram of the oracle's picks, if there is an oracle.
func (e *Eval) writeOracle(bw io.Writer) error {
	if e.Oracle == nil {
		return nil
	}
	m := e.Oracle.HistogramMetric
	counts, ties, err := e.Oracle.Picks(m)
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "## Best window per query (%s)\n\n", metricLabel(m))
	fmt.Fprintf(bw, "How many queries each window is the best for by %s (on a tie between some windows, "+
		"the first of them); \"all equal\" counts the queries on which every window scores the same, "+
		"(each ranks the relevant documents alike, or none finds one).\n\n", metricLabel(m))
	t := &table{head: []string{"window", "queries"}, right: []bool{false, true}}
	for i, n := range counts {
		t.rows = append(t.rows, []string{e.Oracle.Over[i], fmt.Sprint(n)})
	}
	t.rows = append(t.rows, []string{"all equal", fmt.Sprint(ties)})
	t.write(bw)
	return nil
}

// writeRun writes where the index came from and the timings.
func (e *Eval) writeRun(bw io.Writer) {
	fmt.Fprintf(bw, "## Run\n\n")
	reuse := "built for this run"
	if e.Index.Reused {
		reuse = "reused"
	}
	fmt.Fprintf(bw, "Index %s (%s: %s). Model %s (%d dims, %d tokens at most). msrag %s, %s.\n\n",
		e.Index.Dir, reuse, e.Index.Why, e.Model.Name, e.Model.Dims, e.Model.MaxTokens, e.MsragVersion, e.GoVersion)
	tt := &table{head: []string{"build", "open", "embed queries", "search", "fuse", "evaluate", "total"}, right: []bool{true, true, true, true, true, true, true}}
	ti := e.Timings
	tt.rows = append(tt.rows, []string{secs(ti.Build), secs(ti.Open), secs(ti.Embed), secs(ti.Search), secs(ti.Fuse), secs(ti.Eval), secs(ti.Total)})
	tt.write(bw)
}

func secs(s float64) string { return fmt.Sprintf("%.2f s", s) }

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
