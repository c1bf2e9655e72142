package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/remote"
)

// deviceFlagNames are the flags of embed.Options' device fields.
var deviceFlagNames = map[string]string{"Device": "--device", "DeviceID": "--device-id", "GPUs": "--gpus"}

// deviceUsage turns an embed.OptionError into the usage error that names
// the flags; other errors pass as they are.
func deviceUsage(cmd, model string, err error) error {
	var oe *embed.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	msg := deviceFlagNames[oe.Field] + " " + oe.Value
	if oe.With != "" {
		msg += " with " + deviceFlagNames[oe.With] + " " + oe.WithValue
	}
	if errors.Is(err, embed.ErrNoDevice) {
		msg += ": model " + remote.Redact(model)
	}
	return usagef("%s: %s: %s", cmd, msg, oe.Why)
}

// modelOptions maps the device flags to the options the model of --model
// is opened with, refusing before any work the flags that nothing would
// use: any device with --model none, --device-id with --device cpu. In
// index they are the model's alone, so a device for a model that runs on
// none (behind a server, the hash test embedder) or GPUs with --device cpu
// are refused too (embed.CheckOptions). In eval, which also searches, they
// place the FAISS indices as well (faissGPUs), as a search's do
// (searchModelOptions): GPUs with --device cpu go to FAISS only, and a
// model that runs on no device is opened without them.
func modelOptions(c *cli.Context, cmd string, searches bool) (embed.Options, error) {
	eo, err := embedderOptions(c)
	if err != nil {
		return eo, err
	}
	model := c.String("model")
	switch {
	case noModel(c):
		if field, value := eo.ChoosesDevice(); field != "" {
			return eo, usagef("%s: %s %s needs a model, and --model none has none", cmd, deviceFlagNames[field], value)
		}
		return eo, nil
	case !searches:
		return eo, deviceUsage(cmd, model, embed.CheckOptions(model, eo))
	}
	if eo.Device == embed.DeviceCPU {
		eo.GPUs = nil
	}
	if err := eo.Check(); err != nil {
		return eo, deviceUsage(cmd, model, err)
	}
	if !embed.Devices(embed.Origin{}, model) {
		eo = eo.WithoutDevice()
	}
	return eo, nil
}

// searchModelOptions maps the device flags of a search (any phase; tune's
// too) over the index whose first manifest records m to the options its
// model is opened with. They also place the FAISS indices (faissGPUs), so
// GPUs with --device cpu go to FAISS only, and a model that runs on no
// device (behind a server, the hash test embedder) is opened without them.
// Flags that nothing would use are a usage error: any device on an index
// without a model (no model, no FAISS index), --device-id with --device
// cpu.
func searchModelOptions(c *cli.Context, dir string, m msrag.ModelInfo) (embed.Options, error) {
	eo, err := embedderOptions(c)
	if err != nil {
		return eo, err
	}
	cmd := c.Command.Name
	if m.None() {
		if field, value := eo.ChoosesDevice(); field != "" {
			return eo, usagef("%s: %s %s: index %s was built with --model none: it has no model and no FAISS index to put on a device", cmd, deviceFlagNames[field], value, dir)
		}
		return eo, nil
	}
	if eo.Device == embed.DeviceCPU {
		eo.GPUs = nil
	}
	if err := eo.Check(); err != nil {
		return eo, deviceUsage(cmd, m.Name, err)
	}
	if !msrag.EmbedderDevices(m) {
		eo = eo.WithoutDevice()
	}
	return eo, nil
}
