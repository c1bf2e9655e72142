package embed

import (
	"context"
	"errors"
	"testing"
)

// TestDeviceOptionsThatDoNothing checks that Open and Reopen refuse device
// options that would do nothing, naming the field: a device number or GPUs
// with the CPU as the device, and any device chosen for a kind whose model
// runs on none; the options a kind uses pass.
func TestDeviceOptionsThatDoNothing(t *testing.T) {
	local := kind("local", "")
	local.Devices = true
	withKinds(t, local, kind("srv", "srv:"))
	for _, tc := range []struct {
		model string
		o     Options
		field string // "": opens
		err   error
	}{
		{"m", Options{}, "", nil},
		{"m", Options{Device: DeviceCUDA, DeviceID: 3}, "", nil},
		{"m", Options{Device: DeviceAuto, GPUs: []int{0, 1}}, "", nil},
		{"m", Options{Device: "tpu"}, "Device", nil},
		{"m", Options{Device: DeviceCPU, GPUs: []int{0}}, "GPUs", ErrUnused},
		{"m", Options{GPUs: []int{0}}, "GPUs", ErrUnused},
		{"m", Options{Device: DeviceCPU, DeviceID: 3}, "DeviceID", ErrUnused},
		{"m", Options{Device: DeviceCUDA, DeviceID: 2, GPUs: []int{0, 1}}, "DeviceID", ErrUnused},
		{"m", Options{Device: DeviceAuto, DeviceID: 1, GPUs: []int{1}}, "DeviceID", ErrUnused},
		{"srv:http://x", Options{Device: DeviceCPU}, "", nil},
		{"srv:http://x", Options{Device: DeviceAuto}, "", nil},
		{"srv:http://x", Options{Device: DeviceCUDA}, "Device", ErrNoDevice},
		{"srv:http://x", Options{Device: DeviceCUDA, GPUs: []int{0}}, "GPUs", ErrNoDevice},
		{"srv:http://x", Options{Device: DeviceAuto, DeviceID: 1}, "DeviceID", ErrNoDevice},
	} {
		var oe *OptionError
		_, err := Open(context.Background(), tc.model, tc.o)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s %+v: %v", tc.model, tc.o, err)
			}
			continue
		}
		if !errors.As(err, &oe) || oe.Field != tc.field || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s %+v: %v, want an OptionError for %s wrapping %v", tc.model, tc.o, err, tc.field, tc.err)
		}
		if cerr := CheckOptions(tc.model, tc.o); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("%s %+v: CheckOptions says %v, Open %v", tc.model, tc.o, cerr, err)
		}
	}
	if _, err := Reopen(context.Background(), Origin{Kind: "srv"}, Options{Device: DeviceCUDA}); !errors.Is(err, ErrNoDevice) {
		t.Errorf("reopen with a device: %v, want %v", err, ErrNoDevice)
	}
	if !Devices(Origin{}, "m") || Devices(Origin{Kind: "srv"}, "") || Devices(Origin{}, "srv:http://x") || Devices(Origin{Kind: "nope"}, "") {
		t.Error("Devices: want true for the local kind only")
	}
}
