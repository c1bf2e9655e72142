package hub

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

// step is one file of the dataset directory: src in the repository, dst its
// slash-separated path in the directory, and whether src is JSONL qrels to be
// converted to TSV at dst.
type step struct {
	src     File
	dst     string
	convert bool
}

// shardName matches the hub's "<split>-00000-of-00003.parquet".
var shardName = regexp.MustCompile(`^(.+)-\d+-of-\d+\.parquet$`)

// planLayout chooses, from a repository's listing, the files of the corpus,
// the queries and the qrels of every split, and where each goes in the
// dataset directory. Paths that are not clean relative paths are ignored. A
// missing part is an error wrapping [ErrLayout] that lists what the
// repository holds.
func planLayout(files []File) ([]step, error) {
	var valid []File
	for _, f := range files {
		if fs.ValidPath(f.Path) && f.Path != "." {
			valid = append(valid, f)
		}
	}
	slices.SortFunc(valid, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	var steps []step
	for _, part := range []string{"corpus", "queries"} {
		s, err := pickPart(valid, part)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	s, err := pickQrels(valid)
	if err != nil {
		return nil, err
	}
	return append(steps, s...), nil
}

// pickPart chooses the corpus or the queries: the Parquet files of the
// directory PART/ (MTEB's and BEIR's Parquet layout, any number of shards),
// else PART.parquet, PART.jsonl.gz or PART.jsonl at the top (the older BEIR
// layout). Each keeps its path.
func pickPart(files []File, part string) ([]step, error) {
	var shards []step
	for _, f := range files {
		if path.Dir(f.Path) == part && path.Ext(f.Path) == ".parquet" {
			shards = append(shards, step{src: f, dst: f.Path})
		}
	}
	if len(shards) > 0 {
		return shards, nil
	}
	for _, name := range []string{part + ".parquet", part + ".jsonl.gz", part + ".jsonl"} {
		if i := slices.IndexFunc(files, func(f File) bool { return f.Path == name }); i >= 0 {
			return []step{{src: files[i], dst: name}}, nil
		}
	}
	return nil, fmt.Errorf("no %s (%s/*.parquet, %s.parquet, %s.jsonl or %s.jsonl.gz) among %s: %w",
		part, part, part, part, part, listing(files), ErrLayout)
}

// Kinds of qrels file, best first: for each split the files of the best kind
// present are taken, so no split comes in two formats.
const (
	qrelsShards   = iota // qrels/<split>-NNNNN-of-NNNNN.parquet
	qrelsParquet         // qrels/<split>.parquet
	defaultShards        // default/<split>-NNNNN-of-NNNNN.parquet (config "default")
	dataShards           // data/<split>-NNNNN-of-NNNNN.parquet (push_to_hub's default config)
	qrelsTSV             // qrels/<split>.tsv (BEIR)
	qrelsJSONL           // qrels/<split>.jsonl (later MTEB uploads), converted to TSV
)

// qrelsKind classifies a path as a qrels file, giving its split and kind.
func qrelsKind(p string) (split string, kind int, ok bool) {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if m := shardName.FindStringSubmatch(base); m != nil {
		kind, ok := map[string]int{"qrels": qrelsShards, "default": defaultShards, "data": dataShards}[dir]
		return m[1], kind, ok && !strings.HasPrefix(m[1], ".")
	}
	ext := path.Ext(base)
	split = strings.TrimSuffix(base, ext)
	if dir != "qrels" || split == "" || strings.HasPrefix(split, ".") {
		return "", 0, false
	}
	kind, ok = map[string]int{".parquet": qrelsParquet, ".tsv": qrelsTSV, ".jsonl": qrelsJSONL}[ext]
	return split, kind, ok
}

// pickQrels chooses the qrels of every split (see the kinds above); each goes
// into qrels/ under its own name, JSONL as qrels/<split>.tsv.
func pickQrels(files []File) ([]step, error) {
	type choice struct {
		kind  int
		steps []step
	}
	best := map[string]*choice{}
	for _, f := range files {
		split, kind, ok := qrelsKind(f.Path)
		if !ok {
			continue
		}
		s := step{src: f, dst: "qrels/" + path.Base(f.Path)}
		if kind == qrelsJSONL {
			s = step{src: f, dst: "qrels/" + split + ".tsv", convert: true}
		}
		switch c := best[split]; {
		case c == nil || kind < c.kind:
			best[split] = &choice{kind: kind, steps: []step{s}}
		case kind == c.kind:
			c.steps = append(c.steps, s)
		}
	}
	if len(best) == 0 {
		return nil, fmt.Errorf("no qrels (qrels/<split>.tsv, qrels/<split>.jsonl, or qrels/, default/ or data/<split>-NNNNN-of-NNNNN.parquet) among %s: %w",
			listing(files), ErrLayout)
	}
	var steps []step
	for _, split := range slices.Sorted(maps.Keys(best)) {
		steps = append(steps, best[split].steps...)
	}
	return steps, nil
}

// listing names the files of a repository for an error, at most 20 of them.
func listing(files []File) string {
	if len(files) == 0 {
		return "no files"
	}
	var names []string
	for i, f := range files {
		if i == 20 {
			names = append(names, fmt.Sprintf("and %d more", len(files)-20))
			break
		}
		names = append(names, f.Path)
	}
	return fmt.Sprintf("the %d files %s", len(files), strings.Join(names, ", "))
}
