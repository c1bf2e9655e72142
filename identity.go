package msrag

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msrag/msrag/channel"
)

// Identity is what an index is, as far as searching it with another,
// reusing it for an evaluation or serving a fusion model go: the model, how
// its windows were embedded, its channels, every kind's parameters, and
// the corpus it read. IdentityOf reads it from a manifest; Diff compares
// two. Every such check in msrag (shards searched together, msrag eval's
// reuse of an index, a fusion model's index) reads a Diff.
type Identity struct {
	// Model is the embedding model (in an index without a model, the
	// tokenizer that cut its windows).
	Model ModelInfo
	// Embedding describes how the windows were embedded ("independent",
	// "late (segments of ...)"); "" in an index without a model.
	Embedding string
	// Batching is how texts went through the model ("padded" or "single";
	// "padded" where the manifest predates the record); "" without a
	// model.
	Batching string
	// Layout is the index's channels.
	Layout Layout
	// Params holds each kind's parameters by kind name, as the kind
	// describes them (channel.Params.Settings, channel.Kind.Recorded).
	Params map[string]channel.Settings
	// Inputs are the files the build read (Manifest.Inputs).
	Inputs []Input
	// Shard is the part of the corpus the index holds ("2/4"), if any.
	Shard string
}

// IdentityOf reads an index's identity from its manifest.
func IdentityOf(m *Manifest) (Identity, error) {
	kinds, err := channel.KindsOf(m)
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Model: m.Model, Layout: channel.LayoutOf(kinds, windowsOf(m)), Params: map[string]channel.Settings{},
		Inputs: slices.Clone(m.Inputs), Shard: m.Shard}
	if !m.Model.None() {
		id.Embedding, id.Batching = embeddingOf(m), recordedBatching(m)
	}
	for _, k := range kinds {
		r, err := k.Recorded(m)
		if err != nil {
			return Identity{}, fmt.Errorf("%s channels: %w", k.Name(), err)
		}
		id.Params[k.Name()] = r.Settings
	}
	return id, nil
}

// Difference is one field in which an identity differs from the one wanted.
type Difference struct {
	// Field is what differs: "model", "precision" (of the same model),
	// "tokenizer", "embedding", "batching",
	// "channels" (the kinds of channel), "windows", a kind's name (its
	// parameters), "inputs" or "shard".
	Field string
	// Have and Want describe the field on each side (of a kind's
	// parameters, those that differ: "k1=0.9").
	Have, Want string
}

// IdentityDiff is how an identity differs from the one wanted: every field
// but the channels, and how the channels differ.
type IdentityDiff struct {
	Differences []Difference
	Channels    LayoutDiff
}

// Diff compares id (what is there) with want. The embedding and batching of
// an index with a model are compared when want says them, the parameters
// of every kind both layouts have (a kind one side does not describe
// differs in all of them), the inputs when want has some.
func (id Identity) Diff(want Identity) IdentityDiff {
	var d IdentityDiff
	add := func(field, have, want string) {
		if have != want {
			d.Differences = append(d.Differences, Difference{Field: field, Have: have, Want: want})
		}
	}
	switch {
	case id.Model.None() && want.Model.None():
		add("tokenizer", id.Model.TokenizerSHA256, want.Model.TokenizerSHA256)
	case id.Model.Name == want.Model.Name && id.Model.Precision != want.Model.Precision:
		d.Differences = append(d.Differences, Difference{Field: "precision", Have: id.Model.PrecisionName(), Want: want.Model.PrecisionName()})
	case !id.Model.SameModel(want.Model):
		d.Differences = append(d.Differences, Difference{Field: "model", Have: id.Model.Name, Want: want.Model.Name})
	}
	if want.Embedding != "" || want.Model.None() {
		add("embedding", id.Embedding, want.Embedding)
	}
	if want.Batching != "" || want.Model.None() {
		add("batching", id.Batching, want.Batching)
	}
	add("channels", kindNames(id.Layout), kindNames(want.Layout))
	for _, k := range want.Layout.Kinds() {
		if id.Layout.Has(k) {
			have, wanted := id.Params[k.Name()].Diff(want.Params[k.Name()])
			add(k.Name(), have.String(), wanted.String())
		}
	}
	if want.Inputs != nil {
		add("inputs", inputsString(id.Inputs), inputsString(want.Inputs))
	}
	add("shard", id.Shard, want.Shard)
	d.Channels = id.Layout.Diff(want.Layout)
	return d
}

// Field returns the difference in field, if there is one.
func (d IdentityDiff) Field(field string) (Difference, bool) {
	i := slices.IndexFunc(d.Differences, func(x Difference) bool { return x.Field == field })
	if i < 0 {
		return Difference{}, false
	}
	return d.Differences[i], true
}

// Without returns d without the differences in fields.
func (d IdentityDiff) Without(fields ...string) IdentityDiff {
	d.Differences = slices.DeleteFunc(slices.Clone(d.Differences), func(x Difference) bool { return slices.Contains(fields, x.Field) })
	return d
}

// String says how the field differs: "model all-minilm-l6-v2, not
// e5-small-v2".
func (x Difference) String() string {
	return fmt.Sprintf("%s %s, not %s", x.Field, orNone(x.Have), orNone(x.Want))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Explain says, in a few words, how the index differs in the difference's
// field: "were built with different models (a, b)".
func (x Difference) Explain() string {
	switch x.Field {
	case "model":
		return fmt.Sprintf("were built with different models (%s, %s)", x.Have, x.Want)
	case "precision":
		return fmt.Sprintf("were embedded in different precisions (%s, %s): use the same (--fp16 for fp16, without it for fp32)", x.Have, x.Want)
	case "tokenizer":
		return fmt.Sprintf("had their windows cut by different tokenizers (sha256 %.12s..., %.12s...)", x.Have, x.Want)
	case "embedding":
		return fmt.Sprintf("were embedded differently (%s, %s); search them apart", x.Have, x.Want)
	case "batching":
		return fmt.Sprintf("were embedded with different batching (%s, %s), so their vectors are not comparable for a dynamically quantized model; rebuild one with --batching %s",
			x.Have, x.Want, x.Want)
	case "channels":
		return fmt.Sprintf("have channels of different kinds (%s; %s): an index built without some kinds, with --model none or before a kind existed has fewer", x.Have, x.Want)
	case "inputs":
		return fmt.Sprintf("were built from different corpus files (%s; %s)", x.Have, x.Want)
	case "shard":
		return fmt.Sprintf("hold different shards (%s, %s)", x.Have, x.Want)
	}
	return fmt.Sprintf("have %s channels of different parameters (%s; %s)", x.Field, x.Have, x.Want)
}

// checkShard fails unless the shard b can be searched with a as one index:
// the same identity but for the corpus each read and which shard it holds,
// the same channels in the same order. checkParts checks the corpus.
func checkShard(a, b *Manifest, da, db string) error {
	ia, err := IdentityOf(a)
	if err != nil {
		return fmt.Errorf("msrag: index %s: %w", da, err)
	}
	ib, err := IdentityOf(b)
	if err != nil {
		return fmt.Errorf("msrag: index %s: %w", db, err)
	}
	d := ia.Diff(ib).Without("inputs", "shard")
	if len(d.Differences) > 0 {
		return fmt.Errorf("msrag: shards %s and %s %s: %w", da, db, d.Differences[0].Explain(), ErrIndexMismatch)
	}
	if !d.Channels.Same() || d.Channels.Reordered {
		return fmt.Errorf("msrag: shards %s and %s have different windows (%s; %s): %w", da, db, ia.Layout, ib.Layout, ErrIndexMismatch)
	}
	return nil
}

// checkParts fails unless the shards mans (in dirs) are parts of one
// corpus, as far as their manifests tell, saying which shard and which
// file differ:
//   - shards that record their place (msrag index --shard i/n) are of one
//     n, each place once;
//   - a file two shards read by the same path is the same in both (size
//     and sha256);
//   - a file that every shard reads whole (a JSONL file read with --shard,
//     recorded as shared, or read by the same path in two shards) is read,
//     the same (name, size and sha256), by every shard that records its
//     inputs. The files of a directory are each one shard's own.
//
// Shards whose readers record no inputs (Parquet, Arrow) are checked by
// their places only.
func checkParts(mans []*Manifest, dirs []string) error {
	if err := checkPlaces(mans, dirs); err != nil {
		return err
	}
	type read struct {
		shard int
		in    Input
	}
	byPath := map[string]read{}
	holder := map[string]int{} // a file every shard reads (inputKey) -> the first shard that read it
	var shared []string
	addShared := func(key string, j int) {
		if _, ok := holder[key]; !ok {
			holder[key] = j
			shared = append(shared, key)
		}
	}
	for j, m := range mans {
		for _, in := range m.Inputs {
			if r, ok := byPath[in.Path]; ok {
				if r.in.Size != in.Size || r.in.SHA256 != in.SHA256 {
					return fmt.Errorf("msrag: shards %s and %s were built from different corpora: %s is %s in %s and %s in %s: %w",
						dirs[r.shard], dirs[j], in.Path, fileString(r.in), dirs[r.shard], fileString(in), dirs[j], ErrIndexMismatch)
				}
				addShared(inputKey(in), r.shard)
				continue
			}
			byPath[in.Path] = read{j, in}
			if in.Shared {
				addShared(inputKey(in), j)
			}
		}
	}
	for _, key := range shared {
		ref := holder[key]
		for j, m := range mans {
			if len(m.Inputs) == 0 || slices.ContainsFunc(m.Inputs, func(in Input) bool { return inputKey(in) == key }) {
				continue
			}
			return fmt.Errorf("msrag: shards %s and %s are not parts of one corpus: %s: %w", dirs[ref], dirs[j], missingPart(mans[ref], m, key), ErrIndexMismatch)
		}
	}
	return nil
}

// missingPart says how shard b lacks the file key that shard a read whole.
func missingPart(a, b *Manifest, key string) string {
	i := slices.IndexFunc(a.Inputs, func(in Input) bool { return inputKey(in) == key })
	x := a.Inputs[i]
	name := filepath.Base(x.Path)
	if j := slices.IndexFunc(b.Inputs, func(in Input) bool { return filepath.Base(in.Path) == name }); j >= 0 {
		return fmt.Sprintf("%s is %s in shard %s and %s in shard %s", name, fileString(x), orNone(a.Shard), fileString(b.Inputs[j]), orNone(b.Shard))
	}
	return fmt.Sprintf("shard %s read %s (%s) whole, shard %s did not (it read %s)", orNone(a.Shard), name, fileString(x), orNone(b.Shard), someInputs(b.Inputs))
}

// someInputs names a few of a build's inputs, and how many more there are.
func someInputs(ins []Input) string {
	const most = 3
	var names []string
	for _, in := range ins[:min(len(ins), most)] {
		names = append(names, fmt.Sprintf("%s, %s", filepath.Base(in.Path), fileString(in)))
	}
	if len(ins) > most {
		names = append(names, fmt.Sprintf("and %d more", len(ins)-most))
	}
	return strings.Join(names, "; ")
}

// checkPlaces fails unless the shards that record their place in a
// sharded build are parts of builds of one n, each place once.
func checkPlaces(mans []*Manifest, dirs []string) error {
	seen := map[int]int{}
	first, n := -1, 0
	for j, m := range mans {
		if m.Shard == "" {
			continue
		}
		var i, k int
		if _, err := fmt.Sscanf(m.Shard, "%d/%d", &i, &k); err != nil || k < 1 || i < 0 || i >= k {
			return fmt.Errorf("msrag: %s holds shard %q, not i/n: %w", dirs[j], m.Shard, ErrIndexMismatch)
		}
		if first < 0 {
			first, n = j, k
		}
		if k != n {
			return fmt.Errorf("msrag: shards %s and %s are parts of different sharded builds (shard %s, shard %s): %w", dirs[first], dirs[j], mans[first].Shard, m.Shard, ErrIndexMismatch)
		}
		if other, ok := seen[i]; ok {
			return fmt.Errorf("msrag: %s and %s both hold shard %s: %w", dirs[other], dirs[j], m.Shard, ErrIndexMismatch)
		}
		seen[i] = j
	}
	return nil
}

// inputKey identifies a file by name within the corpus, size and sha256:
// the path given may have been another.
func inputKey(in Input) string {
	return fmt.Sprintf("%s %d %s", filepath.Base(in.Path), in.Size, in.SHA256)
}

// fileString describes a file's content: "1024 bytes, sha256 0123abcd4567...".
func fileString(in Input) string {
	return fmt.Sprintf("%d bytes, sha256 %.12s...", in.Size, in.SHA256)
}

// kindNames lists the kinds of a layout's channels.
func kindNames(l Layout) string {
	var names []string
	for _, k := range l.Kinds() {
		names = append(names, k.Name())
	}
	return strings.Join(names, ", ")
}

// inputsString describes a build's inputs by name within the corpus, size
// and sha256, sorted: the path given may have been another.
func inputsString(ins []Input) string {
	out := make([]string, len(ins))
	for i, in := range ins {
		out[i] = fmt.Sprintf("%s %d bytes sha256 %s", filepath.Base(in.Path), in.Size, in.SHA256)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// embeddingOf describes how an index's windows were embedded: the mode,
// and a late index's segments.
func embeddingOf(m *Manifest) string {
	e, err := ParseEmbedding(m.Embedding)
	if err != nil {
		return m.Embedding
	}
	if l := m.Late; l != nil {
		return fmt.Sprintf("%s (segments of %d tokens, overlap %d, edges %s)", e, l.SegmentTokens, l.Overlap, l.Edges)
	}
	return e.String()
}
