// Package suite runs a benchmark suite: several datasets, each with several
// models and window sets, every configuration of the multi-scale method
// (each window alone, RRF, MaxP, the full document, the oracle) scored from
// one search, and one summary of it all.
//
// The moving parts:
//
//   - [Suite] is the suite file's schema (read by [Load] or [Parse]): the
//     datasets by directory and split (with an optional MTEB task name), the
//     models with their window sets, the configurations as msrag eval
//     --configs takes them, k and window_k, and the output directory.
//     Relative paths in a file are relative to the file's directory.
//   - [Check] validates a suite and opens every dataset and model it names
//     before any work, reporting every one that is missing (a model that is
//     not fetched, with the command that fetches it) or does not fit (a
//     window set longer than the model takes). It returns the [Plan]: one
//     [Planned] run per dataset, model and window set, with its output
//     directory Out/DATASET-MODEL-wA-B-C and its index directory
//     Indices/CORPUS-MODEL-wA-B-C. Both names depend only on the suite, so a
//     second run finds its indices and reuses them (experiment.Run checks
//     that the model files, windows and corpus still match).
//   - [Run] runs the plan model by model, one embedder open at a time, each
//     run an [github.com/msrag/msrag/experiment.Run] that embeds the queries
//     once for all configurations and writes its own report, results.json,
//     plots, run files and MTEB result files. A failed run is recorded and
//     the others go on.
//   - [Summary] is summary.json; summary.md beside it holds the method's
//     tables (the best single window against RRF per dataset and model, the
//     oracle's headroom) and links to every run's report, and
//     recall_at_k.png and .svg draw the cdr@K curves of every dataset in one
//     figure ([github.com/msrag/msrag/report.WriteSuitePlots]). Out/mteb
//     gathers every run's MTEB result files, so that one
//     mteb.ResultCache(cache_path=Out/mteb).load_results() reads the whole
//     suite.
package suite
