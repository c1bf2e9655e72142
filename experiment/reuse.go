package experiment

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msrag/msrag"
)

// indexDirs returns the index directories dir stands for
// (msrag.ShardDirs).
func indexDirs(dir string) []string { return msrag.ShardDirs(dir) }

// rebuildable reports whether the index in dir is one an evaluation built
// for itself (its manifest says so, or, from before manifests said it, a
// record of its corpus lies beside it): one it may build again. A record
// there that cannot be read is an error.
func rebuildable(dir string) (bool, error) {
	if m, err := msrag.ReadManifest(dir); err == nil && m.Rebuildable {
		return true, nil
	}
	rec, err := readSource(dir)
	return rec != nil, err
}

// reuse opens the index (or the shards) in spec.Build.Out when it fits spec:
// the identity its manifests record (msrag.Identity) against the one spec
// builds, every shard present, the corpus files the ones it read, and the
// channels the configurations fuse. Otherwise it returns nil and why not.
func reuse(spec Spec, src *corpusSource) (*msrag.Index, string, error) {
	dirs := indexDirs(spec.Build.Out)
	if len(dirs) == 0 {
		return nil, "no index in " + spec.Build.Out, nil
	}
	mans, why, err := identified(spec, dirs)
	if err != nil || why != "" {
		return nil, why, err
	}
	if why, err := corpusDiffers(mans, dirs, src); err != nil || why != "" {
		return nil, why, err
	}
	ix, err := msrag.OpenWith(msrag.OpenOptions{Embedder: spec.Build.Embedder}, dirs...)
	if err != nil {
		return nil, "it does not open: " + err.Error(), nil
	}
	if why := servesConfigs(ix, spec); why != "" {
		ix.Close()
		return nil, why, nil
	}
	if mans[0].Rebuildable {
		return ix, "same model, windows, embedding, batching and corpus", nil
	}
	return ix, fmt.Sprintf("built by msrag index from the dataset's corpus (%d shard(s)), same model, windows and embedding", len(dirs)), nil
}

// identified reads the manifests of the index's shards and says why their
// identities are not the one spec builds, or a shard is missing, or "".
func identified(spec Spec, dirs []string) ([]*msrag.Manifest, string, error) {
	want, err := spec.buildConfig().Identity()
	if err != nil {
		return nil, "", err
	}
	var mans []*msrag.Manifest
	for _, d := range dirs {
		m, err := msrag.ReadManifest(d)
		if err != nil {
			return nil, "it does not open: " + err.Error(), nil
		}
		have, err := msrag.IdentityOf(m)
		if err != nil {
			return nil, "it does not open: " + err.Error(), nil
		}
		if why := differs(have.Diff(want), m, spec); why != "" {
			return nil, why, nil
		}
		mans = append(mans, m)
	}
	return mans, shardsMissing(mans, dirs), nil
}

// servesConfigs says why an open index cannot serve the configurations, or
// "".
func servesConfigs(ix msrag.Searcher, spec Spec) string {
	if why := windowsDiffer(ix, spec.Layout()); why != "" {
		return why
	}
	return fullNeeded(ix, spec)
}

// differs says how an index's identity is not the one spec builds (d: what
// is there against what is wanted), in the words of an evaluation's
// reuse, or "". The corpus, the shards and the channels are looked at
// apart.
func differs(d msrag.IdentityDiff, m *msrag.Manifest, spec Spec) string {
	d = d.Without("inputs", "shard", "channels")
	if len(d.Differences) == 0 {
		return ""
	}
	x := d.Differences[0]
	switch x.Field {
	case "model":
		switch {
		case m.Model.None():
			return "it has no model (built with --model none)"
		case spec.Build.Tokenizer != nil:
			return fmt.Sprintf("it has model %s, and this evaluation has none", m.Model.Name)
		}
		return fmt.Sprintf("it was built with model %s, not %s", x.Have, x.Want)
	case "precision":
		return fmt.Sprintf("its windows were embedded in %s, and the model now runs in %s (--fp16 for fp16)", x.Have, x.Want)
	case "tokenizer":
		return fmt.Sprintf("its windows were cut by a tokenizer of sha256 %s, not by %s (sha256 %s)", x.Have, spec.Build.Tokenizer.Name, x.Want)
	case "embedding":
		return fmt.Sprintf("its windows were embedded %s, not %s", x.Have, x.Want)
	case "batching":
		return fmt.Sprintf("its texts were embedded with %s batching, the model now runs %s", x.Have, x.Want)
	}
	return fmt.Sprintf("its %s channels are %s, not %s", x.Field, x.Have, x.Want)
}

// shardsMissing says which shards of a sharded build are missing, or "".
func shardsMissing(ms []*msrag.Manifest, dirs []string) string {
	n, have := 0, map[string]bool{}
	for i, m := range ms {
		if m.Shard == "" {
			if len(ms) > 1 {
				return fmt.Sprintf("%s is a whole index, not a shard, beside %d others", dirs[i], len(ms)-1)
			}
			return ""
		}
		var k, of int
		if _, err := fmt.Sscanf(m.Shard, "%d/%d", &k, &of); err != nil || (n != 0 && of != n) {
			return fmt.Sprintf("shard %s of %s does not belong with the others", m.Shard, dirs[i])
		}
		n, have[m.Shard] = of, true
	}
	var missing []string
	for k := range n {
		if s := fmt.Sprintf("%d/%d", k, n); !have[s] {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("shards %s are missing from %s: their records do not cover the corpus", strings.Join(missing, ", "), filepath.Dir(dirs[0]))
	}
	return ""
}

// corpusDiffers says how the corpus the index was built from is not the
// dataset's, or "": by the inputs its manifests record, or, for an index
// from before they were recorded, by the record of its corpus beside it.
func corpusDiffers(mans []*msrag.Manifest, dirs []string, src *corpusSource) (string, error) {
	var inputs []msrag.Input
	for i, m := range mans {
		if len(m.Inputs) == 0 {
			if len(mans) == 1 {
				return legacyDiffers(dirs[0], src)
			}
			return fmt.Sprintf("its manifest %s records no inputs (built before msrag recorded them, or from a Parquet or Arrow corpus)",
				filepath.Join(dirs[i], "manifest.json")), nil
		}
		inputs = append(inputs, m.Inputs...)
	}
	why, err := src.differs(inputs)
	if why != "" {
		why = "it was built from another corpus: " + why
	}
	return why, err
}

// legacyDiffers compares the corpus with the record beside an index from
// before manifests recorded their inputs.
func legacyDiffers(dir string, src *corpusSource) (string, error) {
	rec, err := readSource(dir)
	switch {
	case err != nil:
		return "", err
	case rec == nil:
		return "its manifest " + filepath.Join(dir, "manifest.json") + " records no inputs (built before msrag recorded them, or from a Parquet or Arrow corpus)", nil
	}
	ok, err := src.matches(rec)
	if err != nil || ok {
		return "", err
	}
	return fmt.Sprintf("it was built from another corpus (%s, %d bytes, sha256 %s)", rec.Path, rec.Size, rec.SHA256), nil
}

// windowsDiffer says why an index cannot serve an evaluation's windows, or
// "": it must have every channel of want but the full window's (which
// fullNeeded looks at); its channels of kinds the evaluation does not fuse
// are left aside.
func windowsDiffer(ix msrag.Searcher, want msrag.Layout) string {
	kinds := want.Kinds()
	have := slices.DeleteFunc(ix.Layout(), func(c msrag.Channel) bool { return !slices.Contains(kinds, c.Kind) })
	if withoutFull(have).Diff(withoutFull(want)).Same() {
		return ""
	}
	why := fmt.Sprintf("it has windows %v, not %v", have.Descriptions(), want.Descriptions())
	for _, k := range kinds {
		if !ix.Layout().Has(k) {
			return why + fmt.Sprintf("; it has no %s channels: build it with --channel %s, or evaluate it without them", k.Name(), k.Name())
		}
	}
	return why + "; evaluate it with --windows " + slidingSizes(ix)
}

// fullNeeded says why an index without the full window cannot serve the
// configurations asked for (those that fuse it), or "": "" too when they
// are the default ones, which Run then leaves out (leaveOut).
func fullNeeded(ix msrag.Searcher, spec Spec) string {
	need := unserved(spec.Configs, ix)
	if len(need) == 0 || spec.defaultConfigs {
		return ""
	}
	return fmt.Sprintf("it lacks the full window that configuration %s needs: build it with msrag index --full (and --windows %s), or leave %s out of --configs",
		strings.Join(need, ", "), slidingSizes(ix), strings.Join(need, ", "))
}

// withoutFull is l without the full window's channels.
func withoutFull(l msrag.Layout) msrag.Layout {
	return slices.DeleteFunc(slices.Clone(l), func(c msrag.Channel) bool { return c.Window.Truncate })
}

// slidingSizes lists the index's sliding window sizes, as --windows takes
// them.
func slidingSizes(ix msrag.Searcher) string {
	var sizes []string
	for _, wi := range ix.Manifest().Windows {
		if w := wi.Window(); !w.Truncate {
			sizes = append(sizes, fmt.Sprint(w.Size))
		}
	}
	return strings.Join(sizes, ",")
}
