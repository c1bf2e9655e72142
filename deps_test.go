package msrag_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// pureImports is the table of what each pure package may import beyond the
// standard library, in the spirit of go/build/deps_test.go. These packages must
// build with CGO_ENABLED=0: nothing they import may pull in "C".
var pureImports = map[string][]string{
	"chunk":     {"github.com/msrag/msrag/tokenizer"},
	"tokenizer": {"golang.org/x/text/", "golang.org/x/sync/"},
	"fuse":      {},
	"eval":      {},
	"corpus":    {"github.com/apache/arrow-go/v18/", "golang.org/x/", "github.com/", "google.golang.org/protobuf/"},
}

type listedPackage struct {
	ImportPath string
	Standard   bool
	CgoFiles   []string
	Imports    []string
	Module     *struct{ Path string }
}

// TestPurePackagesDoNotNeedCgo lists every dependency of the pure packages with
// cgo enabled and fails if any of them has cgo files or imports "C", or if a
// pure package imports a module its row in pureImports does not allow.
func TestPurePackagesDoNotNeedCgo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found")
	}
	for pkg, allowed := range pureImports {
		if _, err := os.Stat(pkg); err != nil {
			continue // package not written yet
		}
		t.Run(pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-json", "./"+pkg+"/...")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list %s: %v", pkg, err)
			}
			dec := json.NewDecoder(strings.NewReader(string(out)))
			for dec.More() {
				var p listedPackage
				if err := dec.Decode(&p); err != nil {
					t.Fatalf("decoding go list output: %v", err)
				}
				if p.ImportPath == "C" || p.ImportPath == "runtime/cgo" {
					t.Errorf("%s depends on %s", pkg, p.ImportPath)
				}
				if p.Standard {
					continue
				}
				if len(p.CgoFiles) > 0 {
					t.Errorf("%s depends on %s, which has cgo files %v", pkg, p.ImportPath, p.CgoFiles)
				}
				own := "github.com/msrag/msrag/" + pkg
				if p.ImportPath == own || strings.HasPrefix(p.ImportPath, own+"/") {
					continue
				}
				if strings.HasPrefix(p.ImportPath, "github.com/msrag/msrag/") {
					if !allowedBy(p.ImportPath, allowed) {
						t.Errorf("%s may not depend on %s (not in its row of pureImports)", pkg, p.ImportPath)
					}
					continue
				}
				if !allowedBy(p.ImportPath, allowed) {
					t.Errorf("%s may not depend on %s (not in its row of pureImports)", pkg, p.ImportPath)
				}
			}
		})
	}
}

func allowedBy(path string, allowed []string) bool {
	for _, a := range allowed {
		if path == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(path, a)) {
			return true
		}
	}
	return false
}
