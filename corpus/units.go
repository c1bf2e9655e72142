package corpus

import "fmt"

// CountUnits returns the number of units of a corpus (see [Options.Shard]):
// row groups of a Parquet file and record batches of an Arrow IPC file,
// read from their metadata; files of a directory; blocks of
// [Options.BlockLines] lines of a JSONL file and record batches of an Arrow
// stream, which have to be read through to be counted. A build split into
// N shards gives each at least one unit when N <= CountUnits.
func CountUnits(path string, opts Options) (int, error) {
	opts.Shard = Shard{}
	opts, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	f, err := detect(path, opts.Format)
	if err != nil {
		return 0, err
	}
	if fm := formatOf(f); fm != nil && fm.units != nil {
		return fm.units(path, opts)
	}
	return 0, fmt.Errorf("corpus: %s: format %q cannot hold a corpus: %w", path, f, ErrFormat)
}
