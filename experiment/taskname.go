package experiment

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msrag/msrag/mteb"
)

// ErrTask is wrapped by the error of a task name CheckTask refuses unless
// forced: no task of the pinned mteb, another task than the dataset's, a
// task of other modalities than text.
var ErrTask = errors.New("MTEB task refused")

// ErrTaskName is wrapped by the error of a task name that is no name at all
// (a path, white space, a control character), which nothing forces.
var ErrTaskName = errors.New("a task name is a name, not a path")

// CheckTask returns the MTEB task that names the result files of an
// evaluation of the dataset in directory dir (MTEBOptions.Task), given as
// a user typed it:
//
//   - "": TaskName(dir), the task of a dataset MTEB knows by its directory
//     name (scifact is SciFact); the directory of another dataset gives its
//     own name, every character but letters, digits and . _ - written "-"
//     (given, it is taken as the default).
//   - a task of the pinned mteb (mteb.Lookup) in its spelling; a name that
//     differs from it only in case is respelled (respelled reports it).
//
// A task of the pinned mteb is refused when the directory's name is that
// of another task's dataset (SciFact on an arguana folder) or when its
// queries or documents are not text; with force it is taken all the same,
// and so is a name of no MTEB task made of letters, digits and . _ -
// (not beginning with "."). Every other name is an error wrapping ErrTask
// (and mteb.ErrUnknownTask for a name of no task): a task name is a name,
// never a path.
func CheckTask(given, dir string, force bool) (task string, respelled bool, err error) {
	own := TaskName(dir)
	if _, known := mteb.Get(own); given == "" && known {
		return own, false, nil
	}
	if given == "" || given == fileName(own) {
		return fileName(own), false, nil // the default, given again
	}
	t, respelled, err := mteb.Lookup(given)
	switch {
	case err != nil && force && isFileName(given):
		return given, false, nil
	case err != nil && !isFileName(given):
		return "", false, fmt.Errorf("experiment: MTEB task %q: %w (such as SciFact: letters, digits and . _ - only)", given, ErrTaskName)
	case err != nil:
		return "", false, fmt.Errorf("experiment: %w: %w", err, ErrTask)
	case force:
		return t.Name, respelled, nil
	case !t.TextOnly():
		return "", false, fmt.Errorf("experiment: MTEB task %s is a task of %s, and msrag evaluates text: %w", t.Name, strings.Join(t.Modalities, " and "), ErrTask)
	}
	if _, known := mteb.Get(own); known && own != t.Name {
		return "", false, fmt.Errorf("experiment: MTEB task %s disagrees with the dataset %s, which is %s's: "+
			"its MTEB files would give %s's scores as %s's: name %s, or force %s: %w",
			t.Name, dir, own, own, t.Name, own, t.Name, ErrTask)
	}
	return t.Name, respelled, nil
}

// isFileName reports a name that is a file name anywhere: letters, digits
// and . _ -, not beginning with "." (so neither "." nor "..").
func isFileName(s string) bool {
	return s != "" && s[0] != '.' && strings.IndexFunc(s, func(r rune) bool { return !isNameRune(r) }) < 0
}

func isNameRune(r rune) bool {
	return r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
}

// fileName writes every character of s but letters, digits and . _ - as
// "-", and a leading "." as "-" too.
func fileName(s string) string {
	s = strings.Map(func(r rune) rune {
		if isNameRune(r) {
			return r
		}
		return '-'
	}, s)
	if s == "" || s[0] == '.' {
		s = "-" + strings.TrimPrefix(s, ".")
	}
	return s
}
