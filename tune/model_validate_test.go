package tune

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/router"
)

// testFusionModel is a valid fusion model of two windows over 4-dimensional
// embeddings, with a router.
func testFusionModel() *FusionModel {
	const dims, nw = 4, 2
	inputs := dims + nw*fuse.NumFeatures
	r := &router.Model{Channels: []string{"w4", "w8"}, Inputs: inputs, Lambda: 0.1,
		Mean: make([]float64, inputs), Std: make([]float64, inputs), W: make([]float64, (inputs+1)*nw)}
	for i := range r.Std {
		r.Std[i] = 1
	}
	for i := range r.W {
		r.W[i] = float64(i%5) / 10
	}
	return &FusionModel{Format: 1, Model: msrag.ModelInfo{Name: "m", Dims: dims},
		Channels: msrag.LayoutOf([]chunk.Window{{Size: 4, ShortTail: true}, {Size: 8, ShortTail: true}}, dense.Kind),
		Rule:     "rrf", Router: r, Training: []Training{{QueryIDs: []string{"q1"}}}}
}

// fusionModelJSON is m as a file of format 1 (one training dataset, no
// checksum, so that an edited field reaches the checks of its own) holds
// it, with edit applied to the decoded JSON object first.
func fusionModelJSON(t testing.TB, m *FusionModel, edit func(map[string]any)) []byte {
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	json.Unmarshal(data, &obj)
	obj["format"] = 1
	delete(obj, "sha256")
	obj["training"] = obj["training"].([]any)[0]
	if edit != nil {
		edit(obj)
	}
	data, _ = json.Marshal(obj)
	return data
}

// TestReadFusionModelRefusesDamage: every damaged field is refused at load,
// naming the file and the field, instead of panicking at query time.
func TestReadFusionModelRefusesDamage(t *testing.T) {
	rt := func(f func(r map[string]any)) func(map[string]any) {
		return func(o map[string]any) { f(o["router"].(map[string]any)) }
	}
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"inputs zero", rt(func(r map[string]any) { r["inputs"] = 0 }), "router: invalid model: inputs: 0"},
		{"inputs negative", rt(func(r map[string]any) { r["inputs"] = -3 }), "inputs: -3"},
		{"inputs of other dims", rt(func(r map[string]any) {
			r["inputs"] = 11
			r["mean"] = make([]float64, 11)
			r["std"] = []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
			r["w"] = make([]float64, 24)
		}), "inputs: 11, want 12 (4 embedding dims + 2 windows x 4 features)"},
		{"mean short", rt(func(r map[string]any) { r["mean"] = []float64{0} }), "mean: 1 values for 12 inputs"},
		{"std long", rt(func(r map[string]any) { r["std"] = make([]float64, 13) }), "std: 13 values for 12 inputs"},
		{"std zero", rt(func(r map[string]any) { r["std"] = make([]float64, 12) }), "std[0]: 0, want a positive value"},
		{"w short", rt(func(r map[string]any) { r["w"] = []float64{1} }), "w: 1 values, want (12 inputs + 1) x 2 windows = 26"},
		{"lambda negative", rt(func(r map[string]any) { r["lambda"] = -1 }), "lambda: -1"},
		{"no router windows", rt(func(r map[string]any) { r["windows"] = []string{} }), "windows: none"},
		{"router windows other than the rule's", rt(func(r map[string]any) { r["windows"] = []string{"w8", "w4"} }), "its router weighs windows [w8 w4], the rule fuses [w4 w8]"},
		{"router of one window more", rt(func(r map[string]any) { r["windows"] = []string{"w4", "w8", "w16"} }), "w: 26 values, want (12 inputs + 1) x 3 windows = 39"},
		{"dims zero", func(o map[string]any) { o["model"].(map[string]any)["dims"] = 0 }, "model.dims: 0"},
		{"no windows", func(o map[string]any) { o["windows"] = []any{} }, "windows: none"},
		{"window size zero", func(o map[string]any) { o["windows"].([]any)[0].(map[string]any)["size"] = 0 }, "windows[0]: size 0"},
		{"window misnamed", func(o map[string]any) { o["windows"].([]any)[0].(map[string]any)["name"] = "w5" }, `windows[0]: name "w5", the window is w4`},
		{"window repeated", func(o map[string]any) { o["windows"].([]any)[1] = o["windows"].([]any)[0] }, "windows[1]: w4 is repeated"},
		{"bad tail", func(o map[string]any) { o["windows"].([]any)[0].(map[string]any)["tail"] = "x" }, `tail "x"`},
		// Said "the index has no window w16", naming the fusion model's windows the index's.
		{"rule of another window", func(o map[string]any) { o["rule"] = "rrf:windows=4+16" }, "fuses or weighs channel w16, which the fusion model's windows (w4, w8) do not list"},
		{"weight of another window", func(o map[string]any) { o["rule"] = "rrf:weights=4:1/16:2" }, "fuses or weighs channel w16, which the fusion model's windows (w4, w8) do not list"},
		{"bad rule", func(o map[string]any) { o["rule"] = "bogus" }, `unknown rule "bogus"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fusion.json")
			os.WriteFile(path, fusionModelJSON(t, testFusionModel(), tc.edit), 0o644)
			_, err := ReadFusionModel(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want an error naming %s with %q", err, path, tc.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "fusion.json")
	os.WriteFile(path, fusionModelJSON(t, testFusionModel(), nil), 0o644)
	if _, err := ReadFusionModel(path); err != nil {
		t.Fatalf("the valid model: %v", err)
	}
}

// TestFusionModelChecksum: a fusion model file of the current format reads
// back as written; one whose fields were changed afterwards, of another
// format, or whose router reads another version's features is refused,
// naming the file.
func TestFusionModelChecksum(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fusion.json")
	m := testFusionModel()
	m.Training = []Training{{Dataset: "a", QueryIDs: []string{"q1"}}, {Dataset: "b", QueryIDs: []string{"q1", "q2"}}}
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFusionModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Format != FusionModelFormat || len(back.Training) != 2 || back.SHA256 == "" {
		t.Fatalf("read back format %d, %d trainings, sha256 %q", back.Format, len(back.Training), back.SHA256)
	}
	if seen, tr := back.Overlap("b", []string{"q0", "q2"}); len(seen) != 1 || seen[0] != "q2" || tr.Dataset != "b" {
		t.Errorf("overlap with dataset b: %v of %s", seen, tr.Dataset)
	}
	if seen, _ := back.Overlap("c", []string{"q1"}); len(seen) != 0 {
		t.Errorf("overlap with a dataset it was not trained on: %v", seen)
	}
	data, _ := os.ReadFile(path)
	for _, tc := range []struct{ name, from, to, want string }{
		{"changed rule", `"rule": "rrf"`, `"rule": "docrrf"`, "the file was changed or damaged"},
		{"changed weight", `"lambda": 0.1`, `"lambda": 0.2`, "the file was changed or damaged"},
		{"other format", `"format": 2`, `"format": 3`, "format 3, this msrag reads 1 and 2"},
		{"features of another version", `"lambda": 0.1`, `"lambda": 0.1, "features": "kinds/9"`, "the file was changed or damaged"},
	} {
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		if bad == string(data) {
			t.Fatalf("%s: %q not in the file", tc.name, tc.from)
		}
		p := filepath.Join(dir, tc.name+".json")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := ReadFusionModel(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming %s with %q", tc.name, err, p, tc.want)
		}
	}
	// A router of a feature set this msrag does not compute, checksum and
	// all (a file of a later msrag): refused as of another version.
	m.Router.Features = "kinds/9"
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFusionModel(path); err == nil || !strings.Contains(err.Error(), `features: "kinds/9" is not a feature set this msrag computes`) {
		t.Errorf("a router of features kinds/9: %v", err)
	}
}

// TestRouterOverflowIsAnError: finite coefficients whose products overflow
// give an error, not NaN weights.
func TestRouterOverflowIsAnError(t *testing.T) {
	m := testFusionModel()
	nw := len(m.Router.Channels)
	for i := range m.Router.W {
		if j := i / nw; j < m.Model.Dims || j == m.Router.Inputs {
			m.Router.W[i] = 1e308 // the embedding's and the bias's rows
		} else {
			m.Router.W[i] = 0
		}
	}
	if err := useFusionModel(m); !errors.Is(err, router.ErrInvalid) {
		t.Fatalf("got %v, want router.ErrInvalid", err)
	}
}

// useFusionModel fuses a small batch of two queries, three hits a window,
// over 5 documents with m's rule and router.
func useFusionModel(m *FusionModel) error {
	ws := m.Channels.Windows()
	const nq, k, ndocs = 2, 3, 5
	ch := &fusion.Lists{NQ: nq, Layout: m.Channels, Dims: m.Model.Dims, Queries: make([]float32, nq*m.Model.Dims)}
	for i := range ch.Queries {
		ch.Queries[i] = float32(i%7) / 7
	}
	for wi := range ws {
		h := fuse.Hits{K: k}
		for j := range nq * k {
			h.Docs = append(h.Docs, int32((j+wi)%ndocs))
			h.Scores = append(h.Scores, 1-float32(j%k)/10)
		}
		ch.Hits = append(ch.Hits, h)
	}
	for _, withRouter := range []bool{false, m.Router != nil} {
		f, err := m.Fusion(withRouter)
		if err != nil {
			return err
		}
		if _, _, err := fusion.Fuse(f, ch, ndocs, 10); err != nil {
			return err
		}
	}
	return nil
}

// FuzzReadFusionModel: ReadFusionModel either fails or returns a model whose
// rule and router fuse a matching batch without panicking.
func FuzzReadFusionModel(f *testing.F) {
	f.Add(fusionModelJSON(f, testFusionModel(), nil))
	noRouter := testFusionModel()
	noRouter.Router = nil
	f.Add(fusionModelJSON(f, noRouter, nil))
	f.Add(fusionModelJSON(f, testFusionModel(), func(o map[string]any) { o["router"].(map[string]any)["inputs"] = 0 }))
	f.Add(fusionModelJSON(f, testFusionModel(), func(o map[string]any) { o["router"].(map[string]any)["w"] = []float64{1e308, -1e308} }))
	f.Add(fusionModelJSON(f, testFusionModel(), func(o map[string]any) { o["rule"] = "combmnz:norm=zscore,weights=4:2/8:0.5" }))
	f.Add([]byte(`{"format":1,"model":{"dims":1},"windows":[{"name":"full","truncate":true}],"rule":"full"}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fusion.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadFusionModel(path)
		if err != nil {
			return
		}
		if err := useFusionModel(m); err != nil && !errors.Is(err, router.ErrInvalid) {
			t.Fatalf("a model that loaded fails on a matching batch: %v", err)
		}
	})
}
