package corpus

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// format is how one input format is recognised and read. Adding a format is
// one file that defines its format value (beside its reader) and one row of
// formats; Open, CountUnits, ReadQueries and detection read nothing else.
type format struct {
	name Format
	// magic is the first bytes of every file of the format (nil: none).
	magic []byte
	// exts are the extensions (lower case; a trailing .gz is taken off
	// first) that name the format. For a format with magic they only
	// confirm it: a file with such an extension and without the magic is
	// not a notMagic (an error naming what the file is not).
	exts     []string
	notMagic string
	// gzip: a gzip-compressed file of no known extension is of this format.
	gzip bool
	// layout, for a format read from a directory: whether dir holds it.
	layout func(dir string) (bool, error)
	// open reads a corpus; nil for a format that holds queries only.
	open func(path string, f Format, opts Options) (Reader, error)
	// units counts the units of a corpus (CountUnits).
	units func(path string, opts Options) (int, error)
	// queries reads a queries file itself; nil: through open.
	queries func(path string) ([]Query, error)
}

// formats are the formats Open and ReadQueries know, in the order detection
// tries them (magic bytes of all first, then extensions).
var formats = []*format{
	&parquetFormat,
	&arrowFileFormat,
	&arrowStreamFormat,
	&jsonlFormat,
	&dirFormat,
	&tsvFormat,
	&linesFormat,
}

// formatOf returns the format named f, or nil.
func formatOf(f Format) *format {
	for _, fm := range formats {
		if fm.name == f {
			return fm
		}
	}
	return nil
}

// reader hands r on as a Reader, and no Reader when err is set.
func reader[R Reader](r R, err error) (Reader, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// detectDir returns the format of directory path: forced, when the
// directory holds it, or the first format whose layout it holds.
func detectDir(path string, forced Format) (Format, error) {
	for _, fm := range formats {
		if fm.layout == nil || (forced != FormatAuto && fm.name != forced) {
			continue
		}
		ok, err := fm.layout(path)
		if err != nil {
			return "", err
		}
		if ok {
			return fm.name, nil
		}
	}
	return "", fmt.Errorf("corpus: %s is a directory, not %s: %w", path, forced, ErrFormat)
}

// detectContent returns the format of a file whose first bytes are head and
// whose name (lower case, without .gz) is name.
func detectContent(path, name string, head []byte) (Format, error) {
	for _, fm := range formats {
		if fm.magic != nil && hasPrefix(head, fm.magic) {
			return fm.name, nil
		}
	}
	ext := filepath.Ext(name)
	for _, fm := range formats {
		if ext == "" || !slices.Contains(fm.exts, ext) {
			continue
		}
		if fm.magic != nil {
			return "", fmt.Errorf("corpus: %s: not %s: %w", path, fm.notMagic, ErrFormat)
		}
		return fm.name, nil
	}
	for _, fm := range formats {
		if fm.gzip && hasPrefix(head, magicGzip) {
			return fm.name, nil
		}
	}
	return "", fmt.Errorf("corpus: %s: cannot tell the format from its content or extension (want %s): %w%w", path, readable(), ErrFormat, errUndetected)
}

// errUndetected marks the error of a file whose format detection cannot
// tell, so that ReadQueries can list what it reads instead.
var errUndetected = errors.New("")

// readable lists what Open reads: each corpus format's first extension,
// and a directory; with queries, what ReadQueries reads besides (TSV, plain
// lines).
func readable(queries ...bool) string {
	var names []string
	for _, fm := range formats {
		if fm.open == nil && (len(queries) == 0 || fm.queries == nil) || len(fm.exts) == 0 {
			continue
		}
		n := fm.exts[0]
		if fm.gzip {
			n += "[.gz]"
		}
		names = append(names, n)
	}
	return strings.Join(append(names, "a directory"), ", ")
}
