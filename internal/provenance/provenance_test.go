package provenance

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromSettings(t *testing.T) {
	var b Build
	fromSettings(&b, []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abc"},
		{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}, {Key: "GOOS", Value: "linux"}})
	if b.Revision != "0123abc" || b.Time != "2026-01-02T03:04:05Z" || b.Modified == nil || !*b.Modified {
		t.Fatalf("fromSettings: %+v", b)
	}
}

func TestString(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		b    Build
		want string
	}{
		{Build{Version: "(devel)"}, "(devel) unknown revision"},
		{Build{Version: "(devel)", Revision: "abc", Modified: &yes}, "(devel) abc (modified)"},
		{Build{Version: "v1.2.0", Revision: "abc", Modified: &no}, "v1.2.0 abc"},
		{Build{Version: "(devel)", Revision: "abc"}, "(devel) abc (modified: unknown)"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("%+v: String() = %q, want %q", tc.b, got, tc.want)
		}
	}
}

// TestCurrent: a test binary has no VCS data, so the linker-set revision
// is used; the rest comes from the runtime and the libraries.
func TestCurrent(t *testing.T) {
	libs := Libraries{ONNXRuntime: "1.30.0", FAISS: "1.7.3", FAISSOptions: "OPTIMIZE AVX2"}
	b := Current(libs)
	if b.Module != "github.com/msrag/msrag" || b.GoVersion != runtime.Version() {
		t.Errorf("module %q, go %q", b.Module, b.GoVersion)
	}
	if b.ONNXRuntime != libs.ONNXRuntime || b.FAISS != libs.FAISS || b.FAISSOptions != libs.FAISSOptions {
		t.Errorf("libraries %+v, want %+v", b, libs)
	}
	if b.Revision != "" {
		t.Skipf("this test binary was stamped with revision %s", b.Revision)
	}
	revision, modified = "0123abc", "false"
	defer func() { revision, modified = "", "" }()
	b = Current(libs)
	if b.Revision != "0123abc" || b.Modified == nil || *b.Modified {
		t.Fatalf("with linker-set revision: %+v", b)
	}
}
