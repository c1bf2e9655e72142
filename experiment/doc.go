// Package experiment evaluates a multi-scale index on a BEIR/MTEB dataset:
// [Run] takes a [Spec] (dataset, split, model, windows, configurations),
// reuses the index in Spec.Build.Out when its identity (msrag.Identity: the
// model, embedding, batching, channels and their parameters, and the corpus
// files its manifest records with their sizes, times and sha256) is the one
// Spec builds, or builds it, embeds the split's
// queries once per batch, searches every window once, fuses the same chunk
// lists into every configuration ([Config]: a fusion.Fusion, or the oracle),
// scores them as pytrec_eval does (package eval) and writes the results
// (package report) into Spec.Out.
//
// The index directory's lock (msrag.LockIndex) is held from the decision to
// reuse or rebuild until the index is open, so concurrent runs sharing an
// index either wait (Spec.Build.Wait) or fail at once naming the other.
package experiment
