package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/internal/safefile"
)

// The manifest's types are the public schema in package indexfile; these
// names keep the store's callers short.
type (
	Manifest   = indexfile.Manifest
	ModelInfo  = indexfile.ModelInfo
	WindowInfo = indexfile.WindowInfo
	LateInfo   = indexfile.LateInfo
	Input      = indexfile.Input
)

// ManifestName is the manifest's file name inside an index directory.
const ManifestName = indexfile.ManifestName

// FormatVersion is the on-disk format this code writes for an index with
// a model; versions 1 and 2 are read too (indexfile converts them as
// they are decoded).
const FormatVersion = indexfile.FormatVersion

// NoModelFormatVersion is the format of an index without a model.
const NoModelFormatVersion = indexfile.NoModelFormatVersion

// ErrMismatch is wrapped by errors about an index that does not match its
// manifest, its files or the model it is opened with.
var ErrMismatch = indexfile.ErrMismatch

// IsIndex reports whether dir holds a manifest. A missing dir whose index a
// build killed during its publish left aside is put back first (see
// LockDir).
func IsIndex(dir string) bool {
	return hasManifest(dir) || restoreMissing(dir) && hasManifest(dir)
}

// hasManifest reports whether dir holds a manifest, as it is now.
func hasManifest(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ManifestName))
	return err == nil
}

// ReadManifest reads and checks dir's manifest. A missing dir is put back
// as IsIndex does.
func ReadManifest(dir string) (*Manifest, error) {
	restoreMissing(dir)
	path := filepath.Join(dir, ManifestName)
	data, err := safefile.ReadSmall(path, maxManifest)
	if err != nil {
		return nil, fmt.Errorf("%s is not an index: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.FormatVersion < 1 || m.FormatVersion > indexfile.ChannelsFormatVersion {
		return nil, fmt.Errorf("%s: format version %d, this msrag reads 1 to %d: %w", path, m.FormatVersion, indexfile.ChannelsFormatVersion, ErrMismatch)
	}
	if len(m.Windows) == 0 {
		return nil, fmt.Errorf("%s: no windows: %w", path, ErrMismatch)
	}
	if err := validate(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// ErrBadManifest is wrapped by ReadManifest's errors for a manifest whose
// fields cannot describe an index (damaged or edited by hand).
var ErrBadManifest = errors.New("invalid manifest")

// maxManifest bounds a manifest's size: a few KiB in practice.
const maxManifest = 16 << 20

// maxDims bounds the vectors' dims a manifest may record.
const maxDims = 1 << 16

// validate checks every field the index is opened with: counts not negative,
// sizes positive, file names plain names inside the index directory, each
// window once, and each kind's section as the kind checks it. Errors name
// the field.
func validate(m *Manifest) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrBadManifest)
	}
	if m.Model.None() {
		if err := validateNoModel(m); err != nil {
			return err
		}
	} else if m.Model.Dims <= 0 || m.Model.Dims > maxDims {
		return bad("model.dims %d, want 1 to %d", m.Model.Dims, maxDims)
	}
	if m.Model.MaxTokens < 0 {
		return bad("model.max_tokens %d is negative", m.Model.MaxTokens)
	}
	if o := m.Model.Origin; o.Kind == "" && (o.Params != "" || o.Access != "") {
		return bad("model.origin has parameters but no kind")
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"docs", m.Docs}, {"unique_chunks", m.UniqueChunks}, {"tokens", m.Tokens}, {"skipped_docs", m.Skipped}} {
		if c.v < 0 {
			return bad("%s %d is negative", c.name, c.v)
		}
	}
	files := map[string]string{}
	if err := plainFile(files, "docs_file", m.DocsFile); err != nil {
		return err
	}
	for i, w := range m.Windows {
		if err := validateWindow(w, files, i, !m.Model.None()); err != nil {
			return err
		}
	}
	if l := m.Late; l != nil && (l.SegmentTokens <= 0 || l.SequenceTokens < l.SegmentTokens || l.Overlap < 0 || l.Overlap >= l.SegmentTokens) {
		return bad("late: segment_tokens %d, sequence_tokens %d, overlap %d: want 0 <= overlap < segment_tokens <= sequence_tokens", l.SegmentTokens, l.SequenceTokens, l.Overlap)
	}
	if (len(m.Channels) > 0) != (m.FormatVersion == indexfile.ChannelsFormatVersion) {
		return bad("format version %d with %d kinds of channel in channels: want format %d exactly when there are some", m.FormatVersion, len(m.Channels), indexfile.ChannelsFormatVersion)
	}
	return validateKinds(m, files)
}

// validateKinds checks the section of every kind the manifest records, by
// the kind, and the files it names; an index records at least one kind.
func validateKinds(m *Manifest, files map[string]string) error {
	for _, k := range channel.Kinds() {
		r, err := k.Recorded(m)
		if err != nil {
			return fmt.Errorf("%s channels: %w: %w", k.Name(), err, ErrBadManifest)
		}
		for _, f := range recordedFiles(r) {
			if err := plainFile(files, f.Field, f.Name); err != nil {
				return err
			}
		}
	}
	kinds, err := channel.KindsOf(m)
	if err != nil {
		return err
	}
	if len(kinds) == 0 {
		return fmt.Errorf("no channels of a kind this msrag registers (registered: %s): %w", orNone(strings.Join(channel.Names(), ", ")), ErrBadManifest)
	}
	return nil
}

// recordedFiles are the files a kind's record names (none without one).
func recordedFiles(r *channel.Record) []channel.FileRef {
	if r == nil {
		return nil
	}
	return r.Files
}

// validateNoModel checks a manifest of an index without a model: format
// 4 or later, no vectors, no FAISS settings. Its windows have no FAISS
// file (validateWindow).
func validateNoModel(m *Manifest) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s (an index without a model, model %q): %w", fmt.Sprintf(format, args...), indexfile.NoModel, ErrBadManifest)
	}
	switch {
	case m.FormatVersion < NoModelFormatVersion:
		return bad("format version %d, want %d", m.FormatVersion, NoModelFormatVersion)
	case m.Model.Name != indexfile.NoModel:
		return bad("model.name %q", m.Model.Name)
	case m.Model.Dims != 0 || m.Model.ModelSHA256 != "" || m.Factory != "" || m.Metric != "" || m.Late != nil:
		return bad("model.dims %d, model_sha256 %q, factory %q, metric %q, late: want none of them", m.Model.Dims, m.Model.ModelSHA256, m.Factory, m.Metric)
	case m.Model.TokenizerSHA256 == "":
		return bad("no model.tokenizer_sha256")
	}
	return nil
}

// validateWindow checks window i of a manifest; files collects the file
// names seen so far. A window of an index without a model (model false)
// has no FAISS file; the kind of the model's vectors checks the others'.
func validateWindow(w WindowInfo, files map[string]string, i int, model bool) error {
	field := fmt.Sprintf("windows[%d]", i)
	switch {
	case w.Size < 0 || w.Size == 0 && !w.Truncate:
		return fmt.Errorf("%s: size %d, want a positive number: %w", field, w.Size, ErrBadManifest)
	case w.Stride < 0 || w.Stride > w.Size:
		return fmt.Errorf("%s: stride %d, want 0 to the size %d: %w", field, w.Stride, w.Size, ErrBadManifest)
	case w.Vectors < 0:
		return fmt.Errorf("%s: vectors %d is negative: %w", field, w.Vectors, ErrBadManifest)
	case w.Tail != "" && w.Tail != "aligned" && w.Tail != "short":
		return fmt.Errorf("%s: tail %q, want aligned or short: %w", field, w.Tail, ErrBadManifest)
	case !model && (w.IndexFile != "" || w.IndexSHA256 != ""):
		return fmt.Errorf("%s: index_file %q in an index without a model: %w", field, w.IndexFile, ErrBadManifest)
	}
	return plainFile(files, field+".chunks_file", w.ChunksFile)
}

// plainFile fails unless name is a plain file name inside the index
// directory (no separator, not "." or "..", no control character) that no
// other field named.
func plainFile(files map[string]string, field, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsFunc(name, unicode.IsControl) {
		return fmt.Errorf("%s %q: want a plain file name inside the index directory: %w", field, name, ErrBadManifest)
	}
	if other, ok := files[name]; ok {
		return fmt.Errorf("%s %q: also %s: %w", field, name, other, ErrBadManifest)
	}
	files[name] = field
	return nil
}

func encodeManifest(m *Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the manifest: %w", err)
	}
	return append(data, '\n'), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
