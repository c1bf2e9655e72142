// Package mteb holds what msrag knows of MTEB's retrieval tasks: for each
// task of the pinned mteb release ([Version]), its dataset repository,
// revision and config, evaluation splits, main score, languages and the
// scoring rules MTEB applies to its runs. The table is generated from
// mteb's own task metadata by scripts/gen_mteb_tasks.py, never written by
// hand.
//
// [Lookup] turns a task name as a user types it into a [Task]: mteb's exact
// spelling, or a spelling that differs only in case (reported, so that the
// caller can say which task it took); any other name is an [ErrUnknownTask]
// that suggests close names. A task name is a name, never a path: callers
// that build file names from it use [Task.Name] after a successful Lookup.
package mteb
