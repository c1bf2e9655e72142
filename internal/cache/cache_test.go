package cache

import (
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	t.Setenv(Env, "/some/cache")
	if got := Dir(); got != "/some/cache" {
		t.Errorf("with %s set: %q", Env, got)
	}
	t.Setenv(Env, "")
	t.Setenv("XDG_CACHE_HOME", "/home/u/.xdg")
	if got, want := Dir(), filepath.Join("/home/u/.xdg", "msrag"); got != want {
		t.Errorf("default: %q, want %q", got, want)
	}
}
