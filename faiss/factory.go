package faiss

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Limits on a factory string's parameters. The lower ones are what FAISS
// needs (HNSW0 crashes, HNSW1 never stops adding levels, IVF0 aborts on an
// assertion, PQ0 and OPQ0 divide by zero); the upper ones keep a typo from
// asking for memory no machine has.
const (
	maxHNSW  = 1024
	maxLists = 1 << 24
	maxBits  = 16
	maxDim   = 1 << 16
)

// FactoryForms lists the factory strings CheckFactory accepts, for messages.
const FactoryForms = "[PCA<d>,|PCAR<d>,|OPQ<m>[_<d>],|L2norm,] then Flat, IVF<n>[_HNSW<M>],{Flat|PQ<m>[x<bits>]|SQ4|SQ6|SQ8|SQfp16}, " +
	"HNSW<M>[,{Flat|PQ<m>[x<bits>]|SQ4|SQ6|SQ8|SQfp16}], PQ<m>[x<bits>], SQ4|SQ6|SQ8|SQfp16 or LSH"

var (
	reNum  = `([0-9]{1,9})`
	rePCA  = regexp.MustCompile(`^PCAR?` + reNum + `$`)
	reOPQ  = regexp.MustCompile(`^OPQ` + reNum + `(?:_` + reNum + `)?$`)
	reIVF  = regexp.MustCompile(`^IVF` + reNum + `(?:_HNSW` + reNum + `)?$`)
	reHNSW = regexp.MustCompile(`^HNSW` + reNum + `$`)
	rePQ   = regexp.MustCompile(`^PQ` + reNum + `(?:x` + reNum + `)?$`)
	reSQ   = regexp.MustCompile(`^SQ(?:4|6|8|fp16)$`)
)

// CheckFactory checks a factory string before FAISS sees it: it must be one
// of the forms FactoryForms lists, with parameters FAISS can build (an HNSW
// or NSG degree of at least 2, at least one inverted list, a PQ's
// sub-quantizer count dividing the dimension it sees, ...). FAISS aborts the
// process, divides by zero or never returns on some of the strings it
// refuses, which no error handling can catch. NSG is refused: FAISS's NSG
// build divides by zero on a few hundred vectors and does not end for small
// degrees. dim is the vectors' dimension;
// 0 checks the form alone. The error wraps ErrArgument.
func CheckFactory(factory string, dim int) error {
	if err := checkFactory(factory, dim); err != nil {
		return fmt.Errorf("faiss: factory %q: %w: %w", factory, ErrArgument, err)
	}
	return nil
}

func checkFactory(factory string, dim int) error {
	// FAISS matches each comma-separated part whole, as it is: " Flat" and
	// "IVF8, Flat" are no forms it knows.
	if i := strings.IndexFunc(factory, unicode.IsSpace); i >= 0 {
		return fmt.Errorf("white space at byte %d: FAISS reads the string as it is, and no part of one holds white space (%s)", i, FactoryForms)
	}
	parts := strings.Split(factory, ",")
	i := 0
	for ; i < len(parts)-1; i++ {
		d, ok, err := checkPreprocessing(parts[i], dim)
		if err != nil || !ok {
			if err != nil {
				return err
			}
			break
		}
		dim = d
	}
	return checkMain(parts[i:], dim)
}

// param reads a regexp group: absent is def; present must lie in lo..hi.
func param(s, what string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	v, _ := strconv.Atoi(s)
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s %d, want %d to %d", what, v, lo, hi)
	}
	return v, nil
}

// checkPreprocessing checks a vector transform and returns the dimension
// after it; ok is false when p is not a transform.
func checkPreprocessing(p string, dim int) (int, bool, error) {
	if p == "L2norm" {
		return dim, true, nil
	}
	if m := rePCA.FindStringSubmatch(p); m != nil {
		d, err := param(m[1], "PCA output dimension", 0, 1, dimOr(dim))
		return d, true, err
	}
	m := reOPQ.FindStringSubmatch(p)
	if m == nil {
		return dim, false, nil
	}
	sub, err := param(m[1], "OPQ sub-quantizers", 0, 1, maxDim)
	if err != nil {
		return 0, true, err
	}
	out, err := param(m[2], "OPQ output dimension", dim, 1, dimOr(dim))
	if err != nil {
		return 0, true, err
	}
	if (out > 0 || dim > 0) && out%sub != 0 {
		return 0, true, fmt.Errorf("OPQ%d: %d sub-quantizers do not divide the dimension %d", sub, sub, out)
	}
	return out, true, nil
}

// dimOr is the most a transform may output: dim, or maxDim when unknown.
func dimOr(dim int) int {
	if dim > 0 {
		return dim
	}
	return maxDim
}

// checkMain checks the index proper: one or two components.
func checkMain(parts []string, dim int) error {
	first, second := parts[0], ""
	if len(parts) > 2 {
		return fmt.Errorf("unexpected %q after %q (accepted: %s)", strings.Join(parts[2:], ","), strings.Join(parts[:2], ","), FactoryForms)
	}
	if len(parts) == 2 {
		second = parts[1]
	}
	switch m := matchAny(first); {
	case first == "LSH":
		if second != "" {
			return fmt.Errorf("unexpected %q after %s", second, first)
		}
		return nil
	case first == "Flat" || reSQ.MatchString(first) || rePQ.MatchString(first):
		if second != "" {
			return fmt.Errorf("unexpected %q after %s", second, first)
		}
		return checkEncoding(first, dim)
	case m.ivf != nil:
		if _, err := param(m.ivf[1], "IVF lists", 0, 1, maxLists); err != nil {
			return err
		}
		if _, err := param(m.ivf[2], "HNSW degree of the coarse quantizer", 2, 2, maxHNSW); err != nil {
			return err
		}
		if second == "" {
			return fmt.Errorf("%s needs an encoding after it (IVF<n>,Flat, IVF<n>,PQ<m>, IVF<n>,SQ8)", first)
		}
		return checkEncoding(second, dim)
	case m.hnsw != nil:
		if _, err := param(m.hnsw[1], "HNSW degree", 0, 2, maxHNSW); err != nil {
			return err
		}
		return checkOptional(second, dim)
	case strings.HasPrefix(first, "NSG"):
		return fmt.Errorf("NSG is not supported: FAISS's NSG build divides by zero on small sets and does not end for small degrees; use HNSW<M>")
	}
	return fmt.Errorf("unknown form %q (accepted: %s)", first, FactoryForms)
}

type matches struct{ ivf, hnsw []string }

func matchAny(s string) matches {
	return matches{reIVF.FindStringSubmatch(s), reHNSW.FindStringSubmatch(s)}
}

func checkOptional(p string, dim int) error {
	if p == "" {
		return nil
	}
	return checkEncoding(p, dim)
}

// checkEncoding checks how vectors are stored: Flat, SQ<t> or
// PQ<m>[x<bits>] with m dividing dim (and LSH as an index of its own).
func checkEncoding(p string, dim int) error {
	if p == "Flat" || reSQ.MatchString(p) {
		return nil
	}
	m := rePQ.FindStringSubmatch(p)
	if m == nil {
		return fmt.Errorf("unknown encoding %q (want Flat, PQ<m>[x<bits>], SQ4, SQ6, SQ8 or SQfp16)", p)
	}
	sub, err := param(m[1], "PQ sub-quantizers", 0, 1, maxDim)
	if err != nil {
		return err
	}
	if _, err := param(m[2], "PQ bits", 8, 1, maxBits); err != nil {
		return err
	}
	if dim > 0 && dim%sub != 0 {
		return fmt.Errorf("PQ%d: %d sub-quantizers do not divide the dimension %d", sub, sub, dim)
	}
	return nil
}

// CheckBuild checks a factory string as New takes it for vectors of
// dimension dim: CheckFactory, then FAISS itself builds the empty index
// and frees it, so that what FAISS would refuse is found before any vector
// is embedded.
func CheckBuild(dim int, factory string, metric Metric) error {
	ix, err := New(dim, factory, metric)
	if err != nil {
		return err
	}
	return ix.Close()
}
