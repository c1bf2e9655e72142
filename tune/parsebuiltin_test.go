package tune

import (
	"strings"
	"testing"
)

// TestParseBuiltin checks that the built-in fusion's name is read in any
// case, as rule names are, that a name with parameters is refused saying
// it takes none, and that rules and file paths name no built-in.
func TestParseBuiltin(t *testing.T) {
	for _, tc := range []struct {
		in      string
		name    string
		errPart string
	}{
		{"transfer", TransferName, ""},
		{" TRANSFER ", TransferName, ""},
		{"Transfer", TransferName, ""},
		{"transfer:windows=64", TransferName, "takes no parameters"},
		{"TRANSFER:c=60", TransferName, "takes no parameters"},
		{"rrf", "", ""},
		{"rrf:windows=all", "", ""},
		{"./transfer", "", ""},
		{"transfer.json", "", ""},
		{"", "", ""},
	} {
		name, ok, err := ParseBuiltin(tc.in)
		if name != tc.name || ok != (tc.name != "") || (err == nil) != (tc.errPart == "") || err != nil && !strings.Contains(err.Error(), tc.errPart) {
			t.Errorf("ParseBuiltin(%q) = %q, %v, %v; want %q and an error with %q", tc.in, name, ok, err, tc.name, tc.errPart)
		}
	}
}
