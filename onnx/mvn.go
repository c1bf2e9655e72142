package onnx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/msrag/msrag/internal/dirlock"
)

// mvnDirs are the system's standard directories of programs, where mvn is
// looked for when PATH is empty or unset (a clean environment, env -i).
var mvnDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// findMvn returns the mvn program and the environment to run it in: mvn on
// PATH with the inherited environment, or, when PATH is empty or unset, mvn
// in one of mvnDirs with PATH set to them (the mvn script runs other
// programs). The error says where it looked.
func findMvn() (string, []string, error) {
	if os.Getenv("PATH") != "" {
		p, err := exec.LookPath("mvn")
		if err != nil {
			return "", nil, fmt.Errorf("mvn (Maven) is not on PATH")
		}
		return p, nil, nil
	}
	for _, d := range mvnDirs {
		p := filepath.Join(d, "mvn")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, append(os.Environ(), "PATH="+strings.Join(mvnDirs, ":")), nil
		}
	}
	return "", nil, fmt.Errorf("mvn (Maven) is not in %s (PATH is empty)", strings.Join(mvnDirs, ", "))
}

// runMvn copies the Maven artifact of the model name into dir with mvn
// dependency:copy, showing its progress on log when log is a terminal. The
// error says why the model cannot be had: no mvn, or mvn's own message.
func runMvn(ctx context.Context, name, artifact, dir string, log io.Writer) error {
	mvn, env, err := findMvn()
	if err != nil {
		return fmt.Errorf("onnx: fetching %s needs %v: install Maven (apt-get install maven), or fetch the model where mvn is and copy it into %s: %w",
			name, err, ModelsDir(), ErrFetch)
	}
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "dependency:copy", "-Dartifact="+artifact, "-DoutputDirectory="+dir)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stop := showProgress(log, name, artifact)
	err = cmd.Run()
	stop(err == nil)
	if err != nil {
		return fmt.Errorf("onnx: fetching %s: %s dependency:copy %s failed (%v): %s: %w",
			name, mvn, artifact, err, mvnMessage(out.String()), ErrFetch)
	}
	return nil
}

// mvnMessage keeps what mvn's output says went wrong: its first [ERROR]
// paragraph (without the "-> [Help 1]" pointer), else its last lines.
func mvnMessage(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var keep []string
	for _, l := range lines {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "[ERROR]")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "-> [Help 1]"))
		if rest == "" && len(keep) > 0 {
			break
		}
		if rest != "" {
			keep = append(keep, rest)
		}
	}
	if len(keep) == 0 {
		keep = lines[max(0, len(lines)-5):]
	}
	if msg := strings.TrimSpace(strings.Join(keep, "; ")); msg != "" {
		return msg
	}
	return "no output"
}

// showProgress draws, on log when it is a terminal, a line redrawn every
// half second while the artifact is fetched: the time spent, and the bytes
// that have reached the artifact's directory in Maven's local repository
// (~/.m2/repository) when it is there. The returned function ends the line.
// On anything else it draws nothing.
func showProgress(log io.Writer, name, artifact string) func(ok bool) {
	f, isFile := log.(*os.File)
	if !isFile {
		return func(bool) {}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return func(bool) {}
	}
	repoDir := mavenArtifactDir(artifact)
	start := time.Now()
	draw := func(state string) {
		line := fmt.Sprintf("\r  %s %s: %.0f s", state, name, time.Since(start).Seconds())
		if n := dirBytes(repoDir); n > 0 {
			line += fmt.Sprintf(", %.1f MB", float64(n)/1e6)
		}
		fmt.Fprint(f, line+"\033[K")
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				draw("fetching")
			}
		}
	}()
	return func(ok bool) {
		close(done)
		<-stopped
		state := "fetched"
		if !ok {
			state = "failed fetching"
		}
		draw(state)
		fmt.Fprintln(f)
	}
}

// mavenArtifactDir returns the directory of artifact (GROUP:ID:VERSION) in
// the user's local Maven repository, or "" when it cannot be named. The
// home is the account's, as Java's user.home is, whatever $HOME says.
func mavenArtifactDir(artifact string) string {
	parts := strings.Split(artifact, ":")
	u, err := user.Current()
	if len(parts) < 3 || err != nil || u.HomeDir == "" {
		return ""
	}
	home := u.HomeDir
	return filepath.Join(home, ".m2", "repository", filepath.FromSlash(strings.ReplaceAll(parts[0], ".", "/")), parts[1], parts[len(parts)-1])
}

// dirBytes sums the sizes of the files directly in dir.
func dirBytes(dir string) int64 {
	if dir == "" {
		return 0
	}
	entries, _ := os.ReadDir(dir)
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// lockEntry takes the lock of the cache entry root/name: the
// [dirlock.Lock] of root/name, the file root/.name.lock naming its holder.
// When another process (or another fetch in this one) holds it, it says so
// once on logf, naming the holder, and waits until the lock is free or ctx is
// done; a lock left by a fetch that died is taken over at once. The returned
// function releases it.
func lockEntry(ctx context.Context, root, name string, logf func(string, ...any)) (func(), error) {
	waiting := func(path, holder string) {
		logf("model %s is being fetched by another process (%s, lock %s): waiting for it", name, holder, path)
	}
	l, err := dirlock.Take(ctx, filepath.Join(root, name), dirlock.Options{Wait: true, Waiting: waiting})
	var held *dirlock.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("onnx: waiting for the fetch of model %s (%s, lock %s): %w", name, held.Holder, held.Path, held.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("onnx: lock of model %s: %w", name, err)
	}
	return func() { l.Unlock() }, nil
}
