package hub

import (
	"slices"
	"strings"

	"github.com/msrag/msrag/mteb"
)

// pinnedRevisions maps the name of an MTEB dataset repository (mteb/NAME)
// to the revisions the pinned mteb's retrieval tasks read it at, from
// package mteb's table (generated from mteb's task metadata), so that
// "hf:mteb/NAME" fetches the data MTEB evaluates on.
var pinnedRevisions = func() map[string][]string {
	out := map[string][]string{}
	for _, t := range mteb.Tasks() {
		name, ok := strings.CutPrefix(t.Dataset, "mteb/")
		if ok && t.Revision != "" && !slices.Contains(out[name], t.Revision) {
			out[name] = append(out[name], t.Revision)
		}
	}
	return out
}()

// PinnedRevision returns the revision the pinned mteb's tasks read the
// dataset repository mteb/NAME at, and whether there is exactly one.
func PinnedRevision(name string) (string, bool) {
	revs := pinnedRevisions[name]
	if len(revs) != 1 {
		return "", false
	}
	return revs[0], true
}

// Pinned returns the names (NAME of mteb/NAME) that have one pinned
// revision, sorted.
func Pinned() []string {
	var names []string
	for n, revs := range pinnedRevisions {
		if len(revs) == 1 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// tasksOver lists the tasks that read the dataset repository repo.
func tasksOver(repo string) []string {
	var names []string
	for _, t := range mteb.Tasks() {
		if t.Dataset == repo {
			names = append(names, t.Name)
		}
	}
	return names
}
