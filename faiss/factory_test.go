package faiss_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/faiss"
)

// TestCheckFactory: strings on which FAISS crashes, aborts or never returns
// are refused before FAISS sees them, naming the parameter; the forms in use
// pass.
func TestCheckFactory(t *testing.T) {
	for _, tc := range []struct {
		factory string
		dim     int
		want    string // "" when accepted
	}{
		{"Flat", 8, ""},
		{"IVF1024,Flat", 384, ""},
		{"IVF4096,PQ48", 384, ""},
		{"IVF4,PQ1x4", 8, ""},
		{"HNSW32", 384, ""},
		{"HNSW2,SQ8", 8, ""},
		{"OPQ16_64,IVF256,PQ16", 384, ""},
		{"PCA64,Flat", 384, ""},
		{"IVF16_HNSW32,Flat", 384, ""},
		{"PQ8", 0, ""},
		{"HNSW0", 8, "HNSW degree 0, want 2 to 1024"},
		{"HNSW1", 8, "HNSW degree 1, want 2 to 1024"},
		{"IVF0,Flat", 8, "IVF lists 0, want 1 to"},
		{"IVF1,PQ0", 8, "PQ sub-quantizers 0, want 1 to"},
		{"OPQ0,PQ8", 8, "OPQ sub-quantizers 0"},
		{"NSG0", 8, "NSG is not supported"},
		{"NSG32", 384, "NSG is not supported"},
		{"PCA16,Flat", 8, "PCA output dimension 16, want 1 to 8"},
		{"PQ3", 10, "3 sub-quantizers do not divide the dimension 10"},
		{"OPQ3,PQ3", 10, "OPQ3: 3 sub-quantizers do not divide the dimension 10"},
		{"OPQ4_8,PQ3", 12, "PQ3: 3 sub-quantizers do not divide the dimension 8"},
		{"PQ4x0", 8, "PQ bits 0"},
		{"PQ4x64", 8, "PQ bits 64"},
		{"IVF999999999,Flat", 8, "IVF lists 999999999"},
		{"HNSW9999999999", 8, "unknown form"},
		{"IVF4", 8, "needs an encoding"},
		{"IVF4,Flat,Flat", 8, "unexpected"},
		{"IVF4,LSH", 8, "unknown encoding"},
		{"NoSuchIndex", 8, "unknown form"},
		{"", 8, "unknown form"},
		// FAISS matches each part whole: white space passed, trimmed, and
		// failed in FAISS once the build began.
		{" Flat ", 8, "white space at byte 0"},
		{"IVF4, Flat", 8, "white space at byte 5"},
		{"Flat\n", 8, "white space at byte 4"},
	} {
		err := faiss.CheckFactory(tc.factory, tc.dim)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q (dim %d): %v", tc.factory, tc.dim, err)
		case tc.want != "" && (!errors.Is(err, faiss.ErrArgument) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q (dim %d): got %v, want ErrArgument with %q", tc.factory, tc.dim, err, tc.want)
		}
	}
}

// TestCheckBuild: strings the parser takes and FAISS refuses (an IVF PQ of
// other than 8 bits in FAISS 1.7.3, an LSH behind a transform) are refused
// by FAISS's own parse, before any vector; the forms in use build.
func TestCheckBuild(t *testing.T) {
	for _, f := range []string{"Flat", "IVF4,Flat", "HNSW4,SQ8", "PQ8", "OPQ4_8,IVF4,PQ4"} {
		if err := faiss.CheckBuild(16, f, faiss.InnerProduct); err != nil {
			t.Errorf("%q: %v", f, err)
		}
	}
	if err := faiss.CheckBuild(16, " Flat", faiss.InnerProduct); !errors.Is(err, faiss.ErrArgument) {
		t.Errorf(`" Flat": %v, want the parser's refusal`, err)
	}
	if !strings.HasPrefix(faiss.Version(), "1.7.") {
		t.Skipf("the strings FAISS refuses here are FAISS 1.7's; this is %s", faiss.Version())
	}
	for _, f := range []string{"L2norm,LSH", "PCA8,LSH", "IVF2,PQ8x10"} {
		if err := faiss.CheckFactory(f, 16); err != nil {
			t.Fatalf("%q: the parser refuses it (%v): the case tests nothing", f, err)
		}
		if err := faiss.CheckBuild(16, f, faiss.InnerProduct); !errors.Is(err, faiss.ErrNative) {
			t.Errorf("%q: %v, want FAISS's refusal", f, err)
		}
	}
}

// TestSmallestAcceptedFactoriesBuild builds, trains, fills and searches the
// smallest parameters CheckFactory accepts, on a tiny set, in a process of
// its own with a time limit: none may crash or hang.
func TestSmallestAcceptedFactoriesBuild(t *testing.T) {
	if f := os.Getenv("MSRAG_FAISS_FACTORY"); f != "" {
		buildTiny(t, f)
		return
	}
	for _, f := range []string{"HNSW2", "IVF1,Flat", "IVF1,PQ1", "OPQ1,PQ1", "PQ1x1", "IVF1_HNSW2,SQ4", "PCA1,Flat", "LSH"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSmallestAcceptedFactoriesBuild$")
		cmd.Env = append(os.Environ(), "MSRAG_FAISS_FACTORY="+f)
		done := make(chan error, 1)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v\n%s", f, err, out.String())
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Errorf("%s: no end within a minute", f)
		}
	}
}

// buildTiny builds factory over 50 vectors of 8 dims and searches it.
func buildTiny(t *testing.T, factory string) {
	d := 8
	n := 50
	xb := make([]float32, d*n)
	for i := range xb {
		xb[i] = float32((i*7919)%101) / 101
	}
	ix, err := faiss.New(d, factory, faiss.L2)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Train(xb); err != nil {
		t.Logf("%s: train: %v (an error is fine, a crash is not)", factory, err)
		return
	}
	if err := ix.Add(xb); err != nil {
		t.Logf("%s: add: %v", factory, err)
		return
	}
	if _, _, err := ix.Search(xb[:d], 5); err != nil {
		t.Logf("%s: search: %v", factory, err)
	}
}
