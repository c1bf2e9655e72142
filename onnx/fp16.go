package onnx

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/msrag/msrag/internal/safefile"
)

// Precisions a model runs in: PrecisionFP32 is model.onnx, PrecisionFP16 its
// half-precision conversion model_fp16.onnx (Options.FP16).
const (
	PrecisionFP32 = "fp32"
	PrecisionFP16 = "fp16"
)

// precisionOf names the precision Options.FP16 asks for.
func precisionOf(fp16 bool) string {
	if fp16 {
		return PrecisionFP16
	}
	return PrecisionFP32
}

// ConverterDir is the venv that converts models to fp16, made by
// scripts/setup-fp16.sh: CacheDir()/venv/fp16, holding ONNX Runtime's float16
// converter (pinned) and fp16_convert.py.
func ConverterDir() string { return filepath.Join(CacheDir(), "venv", "fp16") }

// converter returns the converter's interpreter and script, or an error
// wrapping ErrNoConverter that says how to install them.
func converter() (python, script string, err error) {
	dir := ConverterDir()
	python, script = filepath.Join(dir, "bin", "python"), filepath.Join(dir, "fp16_convert.py")
	for _, p := range []string{python, script} {
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("onnx: the fp16 converter is not installed (no %s): run scripts/setup-fp16.sh from msrag's source tree (it makes the venv %s): %w",
				p, dir, ErrNoConverter)
		}
	}
	return python, script, nil
}

// EnsureFP16 makes the model directory dir's model_fp16.onnx, unless it is
// there, by converting model.onnx with ONNX Runtime's float16 converter
// (keep_io_types: ids in, float32 vectors out; see ConverterDir), and records
// its sha256 in dir's msrag-model.json. A built-in model's conversion must
// give the sha256 models.json records (an ErrChecksum error otherwise: the
// converter is not the pinned one); another model's records what was made,
// which Open then checks. With o.Offline or $MSRAG_OFFLINE it refuses to
// convert (ErrOffline), naming the command that does. The conversion takes the
// model's cache lock and leaves nothing behind when it fails.
func EnsureFP16(ctx context.Context, dir string, o FetchOptions) error {
	return makeFP16(ctx, dir, o, false)
}

// PresentFP16 reports whether the model directory dir has its fp16 file, of
// the sha256 its msrag-model.json (or, for a built-in model, models.json)
// records.
func PresentFP16(dir string) bool {
	info, err := ReadModelInfo(dir)
	if err != nil {
		return false
	}
	want := fp16Sum(info)
	got, err := safefile.SHA256(filepath.Join(dir, FP16ModelFile))
	return err == nil && want != "" && got == want
}

// fp16Sum is the sha256 recorded for the model's fp16 file: in its
// msrag-model.json, else in models.json for a built-in model; "" if none.
func fp16Sum(info ModelInfo) string {
	if sum := info.SHA256[FP16ModelFile]; sum != "" {
		return sum
	}
	b, _ := Builtin(info.Name)
	return b.SHA256[FP16ModelFile]
}

// makeFP16 is EnsureFP16; explicit (msrag model fetch --fp16) converts
// even when offline.
func makeFP16(ctx context.Context, dir string, o FetchOptions, explicit bool) error {
	info, err := ReadModelInfo(dir)
	if err != nil {
		return err
	}
	want := fp16Sum(info)
	path := filepath.Join(dir, FP16ModelFile)
	if _, err := os.Stat(path); err == nil {
		return recordFP16(dir, info, want)
	}
	if !explicit && (o.Offline || OfflineEnv()) {
		return fmt.Errorf("onnx: model %s has no %s and converting is off (--offline or %s=1): %w; make it with: msrag model fetch %s --fp16",
			info.Name, FP16ModelFile, EnvOffline, ErrOffline, info.Name)
	}
	python, script, err := converter()
	if err != nil {
		return err
	}
	if dyn, err := DynamicallyQuantized(filepath.Join(dir, ModelFile)); err != nil || dyn {
		if err == nil {
			err = fmt.Errorf("onnx: model %s is quantized to int8: an fp16 file is made of an fp32 model: %w", info.Name, ErrInput)
		}
		return err
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	unlock, err := lockEntry(ctx, filepath.Dir(dir), filepath.Base(dir), logf)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil { // made by whoever held the lock
		return nil
	}
	logf("model %s: converting %s to %s (fp16)", info.Name, ModelFile, FP16ModelFile)
	got, err := convertFP16(ctx, python, script, dir, want)
	if err != nil {
		return fmt.Errorf("onnx: model %s: %w", info.Name, err)
	}
	if err := recordFP16(dir, info, got); err != nil {
		os.Remove(path)
		return err
	}
	logf("model %s: %s written", info.Name, path)
	return nil
}

// convertFP16 runs the converter on dir's model.onnx into a temporary file
// in dir, checks its sha256 against want (unless ""), moves it to
// model_fp16.onnx and returns its sha256.
func convertFP16(ctx context.Context, python, script, dir, want string) (string, error) {
	tmp, err := os.MkdirTemp(dir, ".fp16-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, FP16ModelFile)
	cmd := exec.CommandContext(ctx, python, script, filepath.Join(dir, ModelFile), out)
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("converting %s to fp16: %s %s failed (%v): %s: %w",
			ModelFile, python, script, err, lastLines(msg.String(), 5), ErrFetch)
	}
	sum, err := safefile.SHA256(out)
	if err != nil {
		return "", err
	}
	if want != "" && sum != want {
		return "", fmt.Errorf("the fp16 conversion gave %s with sha256 %s, want %s (the converter in %s is not the pinned one: run scripts/setup-fp16.sh): %w",
			FP16ModelFile, sum, want, ConverterDir(), ErrChecksum)
	}
	if err := os.Rename(out, filepath.Join(dir, FP16ModelFile)); err != nil {
		return "", err
	}
	return sum, nil
}

// recordFP16 writes sum as model_fp16.onnx's sha256 in dir's msrag-model.json,
// unless it is there already ("" records nothing).
func recordFP16(dir string, info ModelInfo, sum string) error {
	if sum == "" || info.SHA256[FP16ModelFile] == sum {
		return nil
	}
	info = info.clone()
	info.SHA256[FP16ModelFile] = sum
	return WriteModelInfo(dir, info)
}

// lastLines returns the last n lines of s, joined by " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
