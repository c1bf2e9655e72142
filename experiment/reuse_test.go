package experiment

import (
	"strings"
	"testing"

	"github.com/msrag/msrag"
)

// TestReuseSaysPrecision checks that an index embedded in another precision
// than the evaluation's model runs in is not reused, and the reason says
// which precision each has.
func TestReuseSaysPrecision(t *testing.T) {
	d := msrag.IdentityDiff{Differences: []msrag.Difference{{Field: "precision", Have: "fp16", Want: "fp32"}}}
	why := differs(d, &msrag.Manifest{}, Spec{})
	if !strings.Contains(why, "embedded in fp16, and the model now runs in fp32") {
		t.Errorf("differs says %q", why)
	}
}
