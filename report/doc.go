// Package report turns the outcome of an evaluation run (msrag eval) into
// what people read: a Markdown report with tables in the shape of the
// multi-scale method's published results, and plots made with gonum/plot.
//
// The moving parts:
//
//   - [Eval] is the whole outcome of one run, as results.json holds it: the
//     dataset, split, model and windows, the timings, and per configuration
//     (one window alone, RRF over all or some windows, MaxP, the full
//     document, and the oracle) the [eval.Results] with per-query values.
//   - [WriteMarkdown] writes report.md: nDCG@10 of the naive choices (the
//     best single window, the full document) against RRF; correct-document
//     recall at K = 1, 2, 3, 5, 10 per configuration, the oracle marked as the
//     upper bound it is; the oracle's picks; a wider metric table; timings.
//     [WriteSummary] writes its first two tables alone, for a terminal.
//   - [WritePlots] draws the recall@K curves and the histogram of the window
//     the oracle picks per query, each as PNG and SVG.
//   - For a suite of runs (package suite), [WriteSuiteMarkdown] writes the
//     summary's tables over every [SuiteRun] (the best single window against
//     RRF per dataset and model, the oracle's headroom, the runs and links to
//     their reports) and [WriteSuitePlots] draws the recall@K curves of every
//     dataset in one figure, one panel per model and window set.
//
// Values in the tables are the metric means times 100, with two decimals, as
// retrieval papers print them. The package reads nothing but its arguments;
// [eval] stays free of plotting dependencies because the plots live here.
package report
