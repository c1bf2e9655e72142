package testfiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/internal/cache"
)

// PytrecEvalPython returns a python3 that imports pytrec_eval, to run the
// check command msrag eval prints: $MSRAG_PYTHON, else the cache's venv/eval
// (scripts/setup-eval.sh, which make setup runs with MSRAG_SETUP_EVAL=1, as
// CI does), else its venv/mteb. When none does, it skips tb saying so, or,
// under CI ([UnderCI]), fails tb.
func PytrecEvalPython(tb testing.TB) string {
	tb.Helper()
	cands := []string{os.Getenv("MSRAG_PYTHON")}
	for _, v := range []string{"eval", "mteb"} {
		cands = append(cands, filepath.Join(cache.Dir(), "venv", v, "bin", "python3"))
	}
	for _, p := range cands {
		if p != "" && exec.Command(p, "-c", "import pytrec_eval").Run() == nil {
			return p
		}
	}
	const why = "no python3 with pytrec_eval ($MSRAG_PYTHON, or %s/venv/{eval,mteb}): scripts/setup-eval.sh makes venv/eval (make setup with MSRAG_SETUP_EVAL=1)"
	if UnderCI() {
		tb.Fatalf(why+", which CI sets", cache.Dir())
	}
	tb.Skipf(why, cache.Dir())
	return ""
}
