package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotReplaceable is returned by [ReplaceDir] when the destination exists
// and the caller's check says it must not be replaced.
var ErrNotReplaceable = errors.New("exists and may not be replaced")

// Step is one step of a replacement, as [Replacer.Step] sees it.
type Step string

// The steps of a replacement, in order.
const (
	// StepExchange swaps the new directory and the old in one rename.
	StepExchange Step = "exchange"
	// StepAside moves the old directory to its aside name (where the file
	// system refuses the exchange).
	StepAside Step = "aside"
	// StepInPlace moves the new directory to the destination (no old one,
	// or after StepAside).
	StepInPlace Step = "in place"
	// StepRemove removes the old directory, now at the staging or aside
	// name.
	StepRemove Step = "remove old"
)

// asideMark ends the aside name: no staging name (".NAME.msrag-tmp-...")
// matches it, so that cleaning up staging directories never removes it.
const asideMark = ".msrag-old"

// AsideName returns where a replacement that cannot exchange keeps the old
// dir between its two renames: ".NAME.msrag-old" beside it.
func AsideName(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+asideMark)
}

// AsideOf returns the directory whose aside name (see [AsideName]) is the
// base name of path, and whether it is one.
func AsideOf(path string) (string, bool) {
	base := filepath.Base(path)
	name, ok := strings.CutSuffix(strings.TrimPrefix(base, "."), asideMark)
	if !ok || name == "" || !strings.HasPrefix(base, ".") {
		return "", false
	}
	return filepath.Join(filepath.Dir(path), name), true
}

// Replacer moves complete directories into place; [ReplaceDir] uses its zero
// value.
type Replacer struct {
	// Step, when set, is called before each step with its name (StepExchange,
	// ...): a test looks at or copies the directories as a crash at that
	// point would leave them.
	Step func(Step)
	// NoExchange makes the replacement take the two renames, as on a file
	// system that refuses RENAME_EXCHANGE.
	NoExchange bool
}

// ReplaceDir moves the complete directory tmp to dir, which must be on the
// same file system; see [Replacer.Replace].
func ReplaceDir(tmp, dir string, replaceable func(string) bool) error {
	return Replacer{}.Replace(tmp, dir, replaceable)
}

// Replace moves the complete directory tmp to dir, which must be on the same
// file system. An existing dir is first checked with replaceable (nil:
// anything may be replaced), then exchanged with tmp in one atomic rename,
// so that dir holds the old content or the new at every moment, and the
// old one, now at tmp, is removed. Where the file system refuses the
// exchange, dir is renamed to [AsideName] and tmp to dir: between the two
// renames dir is missing and the old content is whole at the aside name,
// which [Restore] puts back. tmp and the parent directory are synced before
// the old content is removed.
func (r Replacer) Replace(tmp, dir string, replaceable func(string) bool) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := SyncDir(tmp); err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		r.step(StepInPlace)
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("moving %s into place: %w", dir, err)
		}
		return SyncDir(parent)
	}
	if replaceable != nil && !replaceable(dir) {
		return fmt.Errorf("%s %w", dir, ErrNotReplaceable)
	}
	old, err := r.swap(tmp, dir)
	if err != nil {
		return err
	}
	if err := SyncDir(parent); err != nil {
		return err
	}
	// The new one is in place: a copy this fails to remove is removed by
	// the next replacement's cleanup (staging name) or by Restore (aside).
	r.step(StepRemove)
	os.RemoveAll(old)
	return nil
}

// swap puts the complete tmp at dir and returns where the old dir now is:
// tmp after an exchange, the aside name after two renames.
func (r Replacer) swap(tmp, dir string) (string, error) {
	if !r.NoExchange {
		r.step(StepExchange)
		err := exchange(tmp, dir)
		if err == nil {
			return tmp, nil
		}
		if !errors.Is(err, errNoExchange) {
			return "", fmt.Errorf("moving %s into place: %w", dir, err)
		}
	}
	aside := AsideName(dir)
	if _, err := os.Lstat(aside); err == nil {
		return "", fmt.Errorf("moving the old %s aside: %s is in the way (a copy an interrupted replacement left; a complete %s makes it stale)", dir, aside, dir)
	}
	r.step(StepAside)
	if err := os.Rename(dir, aside); err != nil {
		return "", fmt.Errorf("moving the old %s aside: %w", dir, err)
	}
	r.step(StepInPlace)
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(aside, dir)
		return "", fmt.Errorf("moving %s into place: %w", dir, err)
	}
	return aside, nil
}

func (r Replacer) step(name Step) {
	if r.Step != nil {
		r.Step(name)
	}
}

// errNoExchange is exchange's error where the file system (or the kernel)
// refuses to exchange two names.
var errNoExchange = errors.New("the file system cannot exchange two names")

// Restore finishes what a replacement stopped between its two renames left
// at aside (AsideName(dir), or an older name of the same kind): with no dir,
// a copy that complete accepts is moved back to dir; beside a dir that
// complete accepts, the copy is stale (the newer one is in place) and is
// removed. Anything else is left as it is. It reports whether it moved a
// copy back. The caller keeps other replacements of dir out (a lock).
func Restore(dir, aside string, complete func(string) bool) (bool, error) {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(aside); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	_, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !complete(aside) {
			return false, nil
		}
		if err := os.Rename(aside, dir); err != nil {
			return false, fmt.Errorf("putting back the earlier %s from %s: %w", dir, aside, err)
		}
		return true, SyncDir(filepath.Dir(dir))
	case err != nil:
		return false, err
	case complete(dir):
		if err := os.RemoveAll(aside); err != nil {
			return false, fmt.Errorf("removing %s, an older copy of %s: %w", aside, dir, err)
		}
	}
	return false, nil
}
