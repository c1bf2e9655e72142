package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msrag/msrag"
)

// indexDirs returns the index directories dir stands for
// (msrag.ShardDirs).
func indexDirs(dir string) []string { return msrag.ShardDirs(dir) }

// reuseRecorded opens the index (or the shards) in spec.Index when the
// inputs their manifests record (msrag index records them) are the
// dataset's corpus files, whatever built it; otherwise it returns nil and
// why not: no record (an index built before inputs were recorded), a file
// that differs (size or sha256), missing shards, or other windows.
func reuseRecorded(spec Spec, src *corpusSource) (*msrag.Index, string, error) {
	dirs := indexDirs(spec.Index)
	var recorded []msrag.Manifest
	for _, d := range dirs {
		m, err := msrag.ReadManifest(d)
		if err != nil {
			return nil, "it does not open: " + err.Error(), nil
		}
		if why := modelMismatch(m, spec); why != "" {
			return nil, why, nil
		}
		if len(m.Inputs) == 0 {
			return nil, "its manifest " + filepath.Join(d, "manifest.json") + " records no inputs (built before msrag recorded them, or from a Parquet or Arrow corpus)", nil
		}
		recorded = append(recorded, *m)
	}
	if why := shardsMissing(recorded, dirs); why != "" {
		return nil, why, nil
	}
	if why, err := inputsDiffer(recorded, src); err != nil || why != "" {
		return nil, why, err
	}
	ix, err := msrag.OpenWith(msrag.OpenOptions{Embedder: spec.Embedder}, dirs...)
	if err != nil {
		return nil, "it does not open: " + err.Error(), nil
	}
	why := windowsDiffer(ix, spec.Layout())
	if why == "" {
		why = fullNeeded(ix, spec)
	}
	if why == "" {
		why = lexicalMismatch(ix.Manifest(), spec)
	}
	if why == "" {
		why = embeddingMismatch(ix.Manifest(), spec)
	}
	if why != "" {
		ix.Close()
		return nil, why, nil
	}
	return ix, fmt.Sprintf("built by msrag index from the dataset's corpus (%d shard(s)), same model, windows and embedding", len(dirs)), nil
}

// shardsMissing says which shards of a sharded build are missing, or "".
func shardsMissing(ms []msrag.Manifest, dirs []string) string {
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

// inputsDiffer compares the recorded inputs of every shard with the
// dataset's corpus files, by name within the corpus (the path given to
// msrag index may have been another), size, then sha256. It says which file
// differs and how, or "".
func inputsDiffer(ms []msrag.Manifest, src *corpusSource) (string, error) {
	byName := map[string][]msrag.Input{}
	for _, m := range ms {
		for _, in := range m.Inputs {
			byName[filepath.Base(in.Path)] = append(byName[filepath.Base(in.Path)], in)
		}
	}
	for _, f := range src.files {
		name := filepath.Base(f)
		ins := byName[name]
		delete(byName, name)
		if len(ins) == 0 {
			return fmt.Sprintf("it was not built from the dataset's corpus file %s (it read %s)", f, recordedNames(ms)), nil
		}
		st, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("experiment: %w", err)
		}
		sum := ""
		for _, in := range ins {
			if in.Size != st.Size() {
				return fmt.Sprintf("corpus file %s differs from the one it was built from (%s): size %d, recorded %d", f, in.Path, st.Size(), in.Size), nil
			}
			if sum == "" {
				if sum, err = fileSHA256(f); err != nil {
					return "", err
				}
			}
			if in.SHA256 != sum {
				return fmt.Sprintf("corpus file %s differs from the one it was built from (%s): sha256 %s, recorded %s", f, in.Path, sum, in.SHA256), nil
			}
		}
	}
	if len(byName) > 0 {
		extra := slices.Sorted(func(yield func(string) bool) {
			for k := range byName {
				if !yield(k) {
					return
				}
			}
		})
		return fmt.Sprintf("it was also built from %s, which the dataset's corpus lacks", strings.Join(extra, ", ")), nil
	}
	return "", nil
}

// recordedNames lists the files the manifests record, for a message.
func recordedNames(ms []msrag.Manifest) string {
	var names []string
	for _, m := range ms {
		for _, in := range m.Inputs {
			if !slices.Contains(names, in.Path) {
				names = append(names, in.Path)
			}
		}
	}
	return strings.Join(names, ", ")
}

// mismatchDense reports whether ix lacks or adds dense channels of want's.
func mismatchDense(ix *msrag.Index, want msrag.Layout) bool {
	return !ix.Layout().Of(msrag.Dense).Diff(want.Of(msrag.Dense)).Same()
}

// windowsDiffer says why an index built by msrag index cannot serve an
// evaluation's windows, or "": it must have every --windows size (and their
// lexical channels when the evaluation fuses them); the full window is not
// needed unless a configuration asked for fuses it (fullNeeded).
func windowsDiffer(ix *msrag.Index, want msrag.Layout) string {
	have := withoutFull(ix.Layout())
	if len(want.Of(msrag.Dense)) == len(want) {
		have = have.Of(msrag.Dense)
	}
	why := layoutMismatch(have, withoutFull(want))
	if why == "" {
		return ""
	}
	lexical := len(want.Of(msrag.Dense)) < len(want)
	if lexical && ix.Manifest().Lexical == nil && !mismatchDense(ix, want) {
		return why + "; it has no lexical windows: build it without --no-lexical, or evaluate it with --no-lexical"
	}
	return why + "; evaluate it with --windows " + slidingSizes(ix)
}

// fullNeeded says why an index without the full window cannot serve the
// configurations asked for (those that fuse it), or "": "" too when they
// are the default ones, which Run then leaves out (leaveOut).
func fullNeeded(ix *msrag.Index, spec Spec) string {
	need := unserved(spec.Configs, ix.Layout())
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
func slidingSizes(ix *msrag.Index) string {
	var sizes []string
	for _, w := range ix.Windows() {
		if !w.Truncate {
			sizes = append(sizes, fmt.Sprint(w.Size))
		}
	}
	return strings.Join(sizes, ",")
}
