package msrag_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// pureImports is the table of the modules each pure package may depend on
// beyond the standard library, in the spirit of go/build/deps_test.go. These
// packages must build with CGO_ENABLED=0: nothing they import may pull in "C".
var pureImports = map[string][]string{
	"chunk": {"github.com/msrag/msrag"},
	"embed": {"github.com/msrag/msrag", "golang.org/x/text", "golang.org/x/sync", "github.com/rivo/uniseg"},
	// remote implements embed.Embedder and tokenizes with tokenizer.
	// remote writes through internal/safefile, which exchanges directories
	// with golang.org/x/sys/unix.
	"remote": {"github.com/msrag/msrag", "golang.org/x/text", "golang.org/x/sync", "golang.org/x/sys", "github.com/rivo/uniseg"},
	// hub checks a fetched dataset with corpus, so it may use what corpus uses.
	"hub": {"github.com/msrag/msrag", "github.com/apache/arrow-go/v18", "github.com/apache/thrift",
		"github.com/andybalholm/brotli", "github.com/klauspost/compress", "github.com/klauspost/cpuid/v2",
		"github.com/pierrec/lz4/v4", "github.com/zeebo/xxh3", "github.com/cespare/xxhash/v2",
		"github.com/goccy/go-json", "github.com/google/flatbuffers", "github.com/google/uuid",
		"golang.org/x/exp", "golang.org/x/net", "golang.org/x/sys", "golang.org/x/text", "golang.org/x/sync",
		"google.golang.org/grpc", "google.golang.org/protobuf", "google.golang.org/genproto/googleapis/rpc"},
	"tokenizer": {"github.com/msrag/msrag", "golang.org/x/text", "golang.org/x/sync", "github.com/rivo/uniseg"},
	"fuse":      {"github.com/msrag/msrag"},
	"fusion":    {"github.com/msrag/msrag"},
	// indexfile is the on-disk schema: plain data and the standard library.
	"indexfile": {"github.com/msrag/msrag"},
	"eval":      {"github.com/msrag/msrag"},
	// mteb is a table of MTEB's tasks; it names their rules with eval's type.
	"mteb": {"github.com/msrag/msrag"},
	// lexical stems with the Snowball English stemmer and returns hits in
	// fuse's layout.
	"lexical": {"github.com/msrag/msrag", "github.com/kljensen/snowball"},
	// corpus reads Parquet and Arrow through arrow-go; the rest are arrow-go's
	// own dependencies (compression, hashing, flatbuffers, its IPC stack).
	"corpus": {"github.com/msrag/msrag", "github.com/apache/arrow-go/v18", "github.com/apache/thrift",
		"github.com/andybalholm/brotli", "github.com/klauspost/compress", "github.com/klauspost/cpuid/v2",
		"github.com/pierrec/lz4/v4", "github.com/zeebo/xxh3", "github.com/cespare/xxhash/v2",
		"github.com/goccy/go-json", "github.com/google/flatbuffers", "github.com/google/uuid",
		"golang.org/x/exp", "golang.org/x/net", "golang.org/x/sys", "golang.org/x/text", "golang.org/x/sync",
		"google.golang.org/grpc", "google.golang.org/protobuf", "google.golang.org/genproto/googleapis/rpc"},
}

// ourPackages are the packages of this module a pure package may import.
var ourPackages = map[string]bool{
	"github.com/msrag/msrag/tokenizer":         true,
	"github.com/msrag/msrag/embed":             true,
	"github.com/msrag/msrag/internal/safefile": true,
	"github.com/msrag/msrag/corpus":            true,
	"github.com/msrag/msrag/internal/cache":    true,
	"github.com/msrag/msrag/fuse":              true,
	"github.com/msrag/msrag/chunk":             true,
	"github.com/msrag/msrag/eval":              true,
	// hub reads the pinned mteb's tasks: their datasets and revisions.
	"github.com/msrag/msrag/mteb": true,
	// fusion's Fusion names the channels it fuses (channel's Layout, whose
	// windows indexfile records) and holds a router.
	"github.com/msrag/msrag/channel":   true,
	"github.com/msrag/msrag/indexfile": true,
	"github.com/msrag/msrag/router":    true,
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
	requireGo(t)
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
				if p.Standard {
					continue // the standard library builds without cgo too (net falls back)
				}
				if slices.Contains(p.Imports, "C") {
					t.Errorf("%s depends on %s, which imports \"C\"", pkg, p.ImportPath)
				}
				if len(p.CgoFiles) > 0 {
					t.Errorf("%s depends on %s, which has cgo files %v", pkg, p.ImportPath, p.CgoFiles)
				}
				own := "github.com/msrag/msrag/" + pkg
				if p.ImportPath == own || strings.HasPrefix(p.ImportPath, own+"/") {
					continue
				}
				if strings.HasPrefix(p.ImportPath, "github.com/msrag/msrag/") && !ourPackages[p.ImportPath] {
					t.Errorf("%s may not depend on %s", pkg, p.ImportPath)
					continue
				}
				if p.Module == nil || !slices.Contains(allowed, p.Module.Path) {
					t.Errorf("%s may not depend on %s (module not in its row of pureImports)", pkg, p.ImportPath)
				}
			}
		})
	}
}

// leaves are the packages below the core: they may import one another and
// internal helpers, never the core, the CLI or what is built on the core.
var leaves = []string{"chunk", "tokenizer", "fuse", "fusion", "eval", "corpus", "embed", "late", "remote", "hub", "router", "faiss", "onnx", "lexical",
	"indexfile", "embedders", "internal/hashembed", "internal/build", "channel", "channels", "internal/testkind"}

// groundFloor are the packages that import no other package of this module:
// fuse's rules and kernels work on hit lists alone (package fusion joins
// them to channels and routers), and the others are as plain.
var groundFloor = []string{"chunk", "tokenizer", "fuse", "eval", "corpus", "router", "faiss"}

// TestGroundFloor checks that the ground floor imports nothing of this
// module, so that no package below another imports it back.
func TestGroundFloor(t *testing.T) {
	requireGo(t)
	const mod = "github.com/msrag/msrag"
	for _, p := range groundFloor {
		own := mod + "/" + p
		for _, dep := range goListDeps(t, "./"+p) {
			if (dep == mod || strings.HasPrefix(dep, mod+"/")) && dep != own && !strings.HasPrefix(dep, own+"/") {
				t.Errorf("%s depends on %s", p, dep)
			}
		}
	}
}

// aboveCore are the packages built on the core; the core imports none of them.
var aboveCore = []string{"cmd/msrag", "experiment", "report", "output", "tune", "suite", "scatter"}

// TestImportDirection checks that leaves never depend on the core (the root
// package) or on anything above it, and that the core never depends on what
// is built on it.
func TestImportDirection(t *testing.T) {
	requireGo(t)
	const mod = "github.com/msrag/msrag"
	forbidden := []string{mod}
	for _, p := range aboveCore {
		forbidden = append(forbidden, mod+"/"+p)
	}
	for _, leaf := range leaves {
		if _, err := os.Stat(leaf); err != nil {
			continue
		}
		for _, dep := range goListDeps(t, "./"+leaf) {
			if slices.Contains(forbidden, dep) {
				t.Errorf("leaf %s depends on %s", leaf, dep)
			}
		}
	}
	for _, dep := range goListDeps(t, ".") {
		if slices.Contains(forbidden[1:], dep) {
			t.Errorf("the core depends on %s", dep)
		}
	}
}

// goListDeps lists the import paths pkg depends on (tests not included).
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// embedderKinds are the packages of the built-in embedder kinds. The core
// opens models through package embed's registry and imports none of them: a
// program imports the kinds it wants, as database/sql drivers are imported.
var embedderKinds = []string{"onnx", "remote", "internal/hashembed", "embedders"}

// TestCoreImportsNoEmbedderKind checks that the root package depends on no
// embedder kind.
func TestCoreImportsNoEmbedderKind(t *testing.T) {
	requireGo(t)
	deps := goListDeps(t, ".")
	for _, k := range embedderKinds {
		if slices.Contains(deps, "github.com/msrag/msrag/"+k) {
			t.Errorf("the core depends on the embedder kind %s", k)
		}
	}
}

// TestCoreImportsNoChannelKind checks that the core (the root package and
// what it depends on) imports no kind of channel: it builds, opens and
// searches kinds through package channel's registry, and a program imports
// the kinds it wants (package channels registers the built-in ones).
func TestCoreImportsNoChannelKind(t *testing.T) {
	requireGo(t)
	const mod = "github.com/msrag/msrag/"
	for _, dep := range goListDeps(t, ".") {
		if strings.HasPrefix(dep, mod+"channel/") || dep == mod+"channels" || dep == mod+"internal/testkind" {
			t.Errorf("the core depends on the kind of channel %s", dep)
		}
	}
}

// requireGo skips a test that lists packages with the go command where
// there is none (a test binary copied elsewhere), and fails it under CI,
// where the import rules must be checked.
func requireGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("go command not found: the import rules cannot be checked")
		}
		t.Skip("go command not found")
	}
}
