package report_test

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/report"
)

// documentedFields reads the field paths of the results.json table in
// docs/eval.md: the backticked names of each row's first cell.
func documentedFields(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../docs/eval.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "### results.json")
	if i < 0 {
		t.Fatal("docs/eval.md has no results.json section")
	}
	doc = doc[i+len("### results.json"):]
	if j := strings.Index(doc, "\n#"); j >= 0 {
		doc = doc[:j]
	}
	name := regexp.MustCompile("`([^`]+)`")
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line, "|", 3)[1]
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// jsonFields lists the JSON paths of t's fields: a struct of this module
// seen for the first time is expanded (object.field, array[].field), an
// embedded struct's fields are listed as t's, any other type is one field.
func jsonFields(t reflect.Type, prefix string, seen map[reflect.Type]bool) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("json"), ",")[0]
		if tag == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type, prefix, seen)...) // its fields are the outer struct's, as encoding/json has them
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		path, ft := prefix+tag, f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			path, ft = path+"[]", ft.Elem()
		}
		ours := strings.HasPrefix(ft.PkgPath(), "github.com/msrag/msrag/report") ||
			strings.HasPrefix(ft.PkgPath(), "github.com/msrag/msrag/internal/") || ft.PkgPath() == "github.com/msrag/msrag/indexfile"
		if ft.Kind() == reflect.Struct && ours && !seen[ft] {
			seen[ft] = true
			out = append(out, jsonFields(ft, path+".", seen)...)
			continue
		}
		out = append(out, strings.TrimSuffix(path, "[]"))
	}
	return out
}

// TestEvalSchemaDocumented: the results.json table of docs/eval.md names
// exactly the fields of report.Eval.
func TestEvalSchemaDocumented(t *testing.T) {
	doc := documentedFields(t)
	code := jsonFields(reflect.TypeFor[report.Eval](), "", map[reflect.Type]bool{})
	for _, f := range code {
		if !slices.Contains(doc, f) {
			t.Errorf("results.json field %s is not in docs/eval.md's table", f)
		}
	}
	for _, f := range doc {
		if !slices.Contains(code, f) {
			t.Errorf("docs/eval.md documents %s, which report.Eval does not have", f)
		}
	}
	if len(code) < 40 {
		t.Fatalf("only %d fields found in report.Eval: %v", len(code), code)
	}
}
