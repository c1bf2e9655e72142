package embed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The devices of Options.Device.
const (
	DeviceCPU  = "cpu"  // the CPU ("" means it too)
	DeviceCUDA = "cuda" // a CUDA GPU: DeviceID, or every one of GPUs
	DeviceAuto = "auto" // CUDA if it can be had, else the CPU
)

// ErrUnused is wrapped by an OptionError whose option would do nothing.
var ErrUnused = errors.New("the option would do nothing")

// ErrNoDevice is wrapped by the OptionError of Open and Reopen for options
// that choose a device (Device "cuda", a DeviceID, GPUs) for a kind whose
// model runs on no device of this machine (Kind.Devices unset: a model
// behind a server, the hash test embedder).
var ErrNoDevice = fmt.Errorf("the embedder runs on no device of this machine: %w", ErrUnused)

// OptionError is a device field of Options whose value is not one it takes,
// or would do nothing (wrapping ErrUnused). Field is the field (Device,
// DeviceID or GPUs) and Value its value; With and WithValue, when set, are
// the other field that makes it idle.
type OptionError struct {
	Field, Value    string
	With, WithValue string
	Why             string
	Err             error
}

func (e *OptionError) Error() string {
	s := "embed: " + e.Field + " " + e.Value
	if e.With != "" {
		s += " with " + e.With + " " + e.WithValue
	}
	return s + ": " + e.Why
}

func (e *OptionError) Unwrap() error { return e.Err }

// cpu reports whether o runs the model on the CPU for sure.
func (o Options) cpu() bool { return o.Device == "" || o.Device == DeviceCPU }

// Check fails when o's device fields name no device, or would do nothing:
// GPUs or a DeviceID with the CPU as the device, a DeviceID beside GPUs
// (which name the devices themselves).
func (o Options) Check() error {
	switch o.Device {
	case "", DeviceCPU, DeviceCUDA, DeviceAuto:
	default:
		return &OptionError{Field: "Device", Value: o.Device, Why: "want cpu, cuda or auto"}
	}
	if len(o.GPUs) > 0 && o.DeviceID != 0 {
		return &OptionError{Field: "DeviceID", Value: strconv.Itoa(o.DeviceID), With: "GPUs", WithValue: gpuText(o.GPUs),
			Why: "the GPUs name the devices: a CUDA device number would go unused", Err: ErrUnused}
	}
	if !o.cpu() {
		return nil
	}
	const cpu = "the model runs on the CPU"
	switch {
	case len(o.GPUs) > 0:
		return &OptionError{Field: "GPUs", Value: gpuText(o.GPUs), With: "Device", WithValue: DeviceCPU,
			Why: cpu + ": the GPUs would go unused", Err: ErrUnused}
	case o.DeviceID != 0:
		return &OptionError{Field: "DeviceID", Value: strconv.Itoa(o.DeviceID), With: "Device", WithValue: DeviceCPU,
			Why: cpu + ": a CUDA device number would go unused", Err: ErrUnused}
	}
	return nil
}

// ChoosesDevice names the field of o that chooses a device of this machine
// for the model, and its value: GPUs, Device "cuda", or a DeviceID; ""
// when none does (Device "auto" alone asks for CUDA only if it can be had).
func (o Options) ChoosesDevice() (field, value string) {
	switch {
	case len(o.GPUs) > 0:
		return "GPUs", gpuText(o.GPUs)
	case o.Device == DeviceCUDA:
		return "Device", o.Device
	case o.DeviceID != 0:
		return "DeviceID", strconv.Itoa(o.DeviceID)
	}
	return "", ""
}

// WithoutDevice returns o with the CPU as its device: no DeviceID, no GPUs.
func (o Options) WithoutDevice() Options {
	o.Device, o.DeviceID, o.GPUs = DeviceCPU, 0, nil
	return o
}

// checkKind fails when o does not Check, or chooses a device for a kind
// whose model runs on none.
func checkKind(k Kind, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	if k.Devices {
		return nil
	}
	if field, value := o.ChoosesDevice(); field != "" {
		return &OptionError{Field: field, Value: value,
			Why: "embedder kind " + k.Name + " runs on no device of this machine: the option would do nothing", Err: ErrNoDevice}
	}
	return nil
}

// CheckOptions checks o as Open checks it for the model called name,
// without opening the model: what Options.Check checks, and no device
// chosen for a kind whose model runs on none.
func CheckOptions(name string, o Options) error {
	k, err := kindOf(name)
	if err != nil {
		return err
	}
	return checkKind(k, o)
}

// Devices reports whether the model an origin records (Origin.Kind; "":
// the kind that claims name) runs on a device of this machine that
// Options.Device chooses (Kind.Devices); false when no kind takes it.
func Devices(origin Origin, name string) bool {
	if origin.Kind == "" {
		k, err := kindOf(name)
		return err == nil && k.Devices
	}
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	return kinds[origin.Kind].Devices
}

// gpuText writes GPUs as a flag takes them: 0,1.
func gpuText(gpus []int) string {
	s := make([]string, len(gpus))
	for i, g := range gpus {
		s[i] = strconv.Itoa(g)
	}
	return strings.Join(s, ",")
}
