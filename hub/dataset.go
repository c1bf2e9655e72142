package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/mteb"
)

// DatasetOptions configure [FetchDataset]. The zero value fetches into
// DataDir() from the hub the environment names (https://huggingface.co when
// none does; see [Options]), and keeps a dataset that is already present.
type DatasetOptions struct {
	// Options configure the hub client: endpoint, token, HTTP client, log.
	Options
	// Dir is the directory that holds the datasets, each in its own
	// subdirectory (see [DatasetRef.DirName]); empty means DataDir().
	Dir string
	// Force fetches again even when the dataset is present.
	Force bool
	// Offline refuses to fetch a dataset that is not present, with an
	// error wrapping [ErrOffline] (as Options.Offline and $HF_HUB_OFFLINE
	// do).
	Offline bool
}

// DatasetRef is a parsed dataset name: a dataset repository at a revision.
type DatasetRef struct {
	Repo     Repo   // ORG/NAME, a dataset repository (mteb/NAME for hf: names)
	Name     string // NAME
	Revision string // after "@", or the pinned one
	Pinned   bool   // Revision came from the pinned mteb's task metadata
	// Task is the MTEB task of a "mteb:TASK" name; nil for "hf:" names.
	Task *mteb.Task
}

// DirName returns the name of the dataset's directory:
// hf--ORG--NAME@REVISION (hf--mteb--NAME@REVISION for MTEB's own).
func (d DatasetRef) DirName() string {
	return "hf--" + strings.ReplaceAll(d.Repo.ID, "/", "--") + "@" + d.Revision
}

var datasetName = regexp.MustCompile(`^hf:mteb/([A-Za-z0-9][A-Za-z0-9._-]*)(?:@([A-Za-z0-9][A-Za-z0-9._-]*))?$`)

// ParseDatasetName parses "hf:mteb/NAME", "hf:mteb/NAME@REVISION" or
// "mteb:TASK". Without a revision, the pinned mteb's tasks must read
// mteb/NAME at one revision (see [PinnedRevision]); otherwise the error
// wraps [ErrRevision]. A task is looked up in package mteb's table (its
// repository and revision), and must be one msrag can fetch (see
// [ParseTask]). A malformed name wraps [ErrName].
func ParseDatasetName(name string) (DatasetRef, error) {
	if task, ok := strings.CutPrefix(name, "mteb:"); ok {
		return ParseTask(task)
	}
	m := datasetName.FindStringSubmatch(name)
	if m == nil || strings.Contains(name, "..") {
		return DatasetRef{}, fmt.Errorf(`hub: dataset %q: want hf:mteb/NAME or hf:mteb/NAME@REVISION (a commit, branch or tag without "/"), or mteb:TASK: %w`, name, ErrName)
	}
	ref := DatasetRef{Repo: Repo{ID: "mteb/" + m[1], Dataset: true}, Name: m[1], Revision: m[2]}
	if ref.Revision == "" {
		rev, ok := PinnedRevision(ref.Name)
		if !ok {
			over := "no task of mteb " + mteb.Version + " reads it"
			if tasks := tasksOver(ref.Repo.ID); len(tasks) > 0 {
				over = "mteb " + mteb.Version + "'s tasks " + strings.Join(tasks, ", ") + " read it at different revisions"
			}
			return DatasetRef{}, fmt.Errorf("hub: dataset %q has no pinned revision (%s): name one as %s@REVISION, or the task as mteb:TASK: %w",
				name, over, name, ErrRevision)
		}
		ref.Revision, ref.Pinned = rev, true
	}
	return ref, nil
}

// ParseTask returns the dataset of the MTEB task named name (mteb's
// spelling, or one that differs in case), at the revision the task reads
// it. A task msrag cannot fetch is an error wrapping [ErrTask] that says
// why: its queries or documents are not text, it has several language
// subsets, or it reads a config of a repository holding several data sets
// (such as dwzhu/LongEmbed), which are not laid out as BEIR's corpus,
// queries and qrels. An unknown name wraps [mteb.ErrUnknownTask] and
// [ErrName].
func ParseTask(name string) (DatasetRef, error) {
	t, _, err := mteb.Lookup(name)
	if err != nil {
		return DatasetRef{}, fmt.Errorf("hub: %w: %w", err, ErrName)
	}
	why := ""
	switch {
	case !t.TextOnly():
		why = fmt.Sprintf("its queries and documents are %s, and msrag retrieves text", strings.Join(t.Modalities, " and "))
	case len(t.Subsets) > 0:
		why = fmt.Sprintf("it has %d language subsets (%s, ...), and msrag fetches a data set of one", len(t.Subsets), t.Subsets[0])
	case t.Config != "":
		why = fmt.Sprintf("it reads config %q of %s, and msrag lays out repositories of one BEIR-style data set (corpus, queries, qrels) only", t.Config, t.Dataset)
	case t.Revision == "":
		why = "mteb pins no revision of its data"
	}
	if why != "" {
		return DatasetRef{}, fmt.Errorf("hub: MTEB task %s (dataset %s): %s: %w", t.Name, t.Dataset, why, ErrTask)
	}
	_, repoName, _ := strings.Cut(t.Dataset, "/")
	return DatasetRef{Repo: Repo{ID: t.Dataset, Dataset: true}, Name: repoName, Revision: t.Revision, Pinned: true, Task: &t}, nil
}

// FetchDataset fetches the MTEB dataset named "hf:mteb/NAME[@REVISION]" or
// "mteb:TASK" (see [ParseDatasetName]) into opts.Dir/hf--ORG--NAME@REVISION
// and returns that directory, which
// corpus.OpenDataset opens. It lists the repository at the revision, picks
// the corpus, the queries and the qrels of every split (see the package
// documentation for the layouts), downloads them checked against the listing
// into a temporary directory beside the target, converts qrels kept as JSONL
// to TSV, opens the result with the corpus package and reads from every part,
// and only then renames it into place. A failure or a cancelled ctx leaves
// nothing behind; an older copy of the dataset stays whole until the new one
// is in place. A dataset already present (its files as recorded when it was
// fetched, and openable) is returned without a request, unless opts.Force;
// so a branch or tag is resolved to its commit when first fetched, and
// fetching its later commits takes opts.Force.
func FetchDataset(ctx context.Context, name string, opts DatasetOptions) (string, error) {
	ref, err := ParseDatasetName(name)
	if err != nil {
		return "", err
	}
	root := opts.Dir
	if root == "" {
		root = DataDir()
	}
	dir := filepath.Join(root, ref.DirName())
	if !opts.Force {
		if err := present(dir); err == nil {
			logf(opts.Log, "%s@%s: present in %s", ref.Repo, ref.Revision, dir)
			return dir, nil
		}
	}
	if err := checkReplaceable(dir, ref, opts.Force); err != nil {
		return "", err
	}
	if opts.Offline || opts.Options.Offline || OfflineEnv() {
		return "", fmt.Errorf("hub: dataset %s is not in %s and fetching is off (--offline or %s): %w; fetch it with: msrag data fetch %s",
			name, dir, EnvOffline, ErrOffline, name)
	}
	c, err := NewClient(opts.Options)
	if err != nil {
		return "", err
	}
	f := &fetcher{c: c, ref: ref, log: opts.Log, force: opts.Force}
	if err := f.run(ctx, root, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// fetcher is one run of FetchDataset.
type fetcher struct {
	c      *Client
	ref    DatasetRef
	commit string
	log    io.Writer
	force  bool
}

// run lists, plans, downloads, checks and publishes the dataset.
func (f *fetcher) run(ctx context.Context, root, dir string) error {
	repo := f.ref.Repo
	f.commit = f.ref.Revision
	if !isCommit(f.commit) {
		var err error
		if f.commit, err = f.c.Commit(ctx, repo, f.ref.Revision); err != nil {
			return err
		}
	}
	files, err := f.c.List(ctx, repo, f.commit)
	if err != nil {
		return err
	}
	steps, err := planLayout(files)
	if err != nil {
		return fmt.Errorf("hub: %s@%s: %w", repo, f.commit, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	tmp, err := os.MkdirTemp(root, "."+f.ref.DirName()+".tmp-")
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer os.RemoveAll(tmp)
	st := stamp{Repo: repo.ID, Revision: f.ref.Revision, Commit: f.commit}
	for _, s := range steps {
		rec, err := f.fetchStep(ctx, tmp, s)
		if err != nil {
			return err
		}
		st.Files = append(st.Files, rec)
	}
	if err := os.RemoveAll(filepath.Join(tmp, rawDir)); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	sum, err := checkDataset(ctx, tmp)
	if err != nil {
		err = &relativeError{err: err, dir: tmp}
		return fmt.Errorf("hub: %s@%s: the fetched files do not open as a dataset: %w: %w", repo, f.commit, err, ErrLayout)
	}
	if err := writeStamp(tmp, st); err != nil {
		return err
	}
	mayReplace := func(d string) bool { return checkReplaceable(d, f.ref, f.force) == nil }
	if err := safefile.ReplaceDir(tmp, dir, mayReplace); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	logf(f.log, "%s@%s: fetched into %s: %s", repo, f.ref.Revision, dir, sum)
	return nil
}

// rawDir holds, inside the temporary directory, the files that are converted
// rather than kept; it is removed before the check.
const rawDir = ".raw"

// fetchStep downloads one planned file into tmp, converting it if planned so,
// and returns its record for the stamp.
func (f *fetcher) fetchStep(ctx context.Context, tmp string, s step) (stampFile, error) {
	dst := filepath.Join(tmp, filepath.FromSlash(s.dst))
	rec := stampFile{Path: s.dst, Source: s.src.Path}
	get := dst
	if s.convert {
		get = filepath.Join(tmp, rawDir, filepath.FromSlash(s.src.Path))
	}
	for _, d := range []string{filepath.Dir(dst), filepath.Dir(get)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return rec, fmt.Errorf("hub: %w", err)
		}
	}
	sum, err := f.c.Download(ctx, f.ref.Repo, f.commit, s.src, get)
	if err != nil {
		return rec, err
	}
	rec.Size, rec.SHA256 = s.src.Size, sum
	if s.convert {
		if rec.Size, rec.SHA256, err = qrelsJSONLToTSV(get, dst); err != nil {
			return rec, fmt.Errorf("hub: %s@%s: %s: %w", f.ref.Repo, f.commit, s.src.Path, err)
		}
	}
	return rec, nil
}

// relativeError shows the paths of the temporary directory dir relative to
// it, since the directory is gone once the error is returned.
type relativeError struct {
	err error
	dir string
}

// Error returns the wrapped error's text with the paths made relative.
func (e *relativeError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.dir+string(filepath.Separator), "")
}

// Unwrap returns the wrapped error.
func (e *relativeError) Unwrap() error { return e.err }

// logf writes one line to w, if any.
func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// checkReplaceable fails unless dir is absent, empty, an earlier fetch of the
// same dataset (its stamp names the same repository), or force is set: a
// fetch never replaces a directory of other files unasked.
func checkReplaceable(dir string, ref DatasetRef, force bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(entries) == 0 || force {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hub: %s is in the way of %s: %w", dir, ref.Repo, err)
	}
	var st stamp
	data, err := safefile.ReadSmall(filepath.Join(dir, StampFile), maxStamp)
	if err == nil && json.Unmarshal(data, &st) == nil && st.Repo == ref.Repo.ID {
		return nil
	}
	return fmt.Errorf("hub: %s holds files that are not a fetch of %s (no %s naming it): not replacing them (move them away, or fetch with --force): %w",
		dir, ref.Repo.ID, StampFile, safefile.ErrNotReplaceable)
}
