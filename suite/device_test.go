package suite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/suite"
)

// TestOpenModelDevice checks that a suite's device goes to its models that
// run on one only: the hash test embedder of a suite run with --device
// cuda opens on no device, where embed.Open alone refuses the option.
func TestOpenModelDevice(t *testing.T) {
	hashTokenizer(t)
	o := embed.Options{Device: embed.DeviceCUDA, GPUs: []int{0}}
	if _, err := embed.Open(context.Background(), "hash-test-embedder", o); !errors.Is(err, embed.ErrNoDevice) {
		t.Fatalf("embed.Open with a device: %v, want %v", err, embed.ErrNoDevice)
	}
	e, err := suite.OpenModel(context.Background(), "hash-test-embedder", o)
	if err != nil {
		t.Fatalf("suite.OpenModel with a device: %v", err)
	}
	e.Close()
}
