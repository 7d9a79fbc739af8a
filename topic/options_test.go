package topic

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// Options: the zero value resolves to the defaults named on each field, and
// a field that is set is kept.
func TestTopicOptionsDefaults(t *testing.T) {
	type otherFS struct{ durable.FS }
	fsys := otherFS{durable.OS}
	fixedNow := func() time.Time { return time.Unix(1, 0) }
	funcID := func(f func() time.Time) uintptr { return reflect.ValueOf(f).Pointer() }
	tests := []struct {
		name string
		in   Options
		want Options
	}{
		{"zero", Options{}, Options{FS: durable.OS, MaxPayloadSize: log.DefaultMaxPayloadSize, Now: time.Now}},
		{"all set", Options{FS: fsys, MaxPayloadSize: 10, Now: fixedNow}, Options{FS: fsys, MaxPayloadSize: 10, Now: fixedNow}},
		{"fs only", Options{FS: fsys}, Options{FS: fsys, MaxPayloadSize: log.DefaultMaxPayloadSize, Now: time.Now}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.withDefaults()
			require.Equal(t, tt.want.FS, got.FS)
			require.Equal(t, tt.want.MaxPayloadSize, got.MaxPayloadSize)
			require.Equal(t, funcID(tt.want.Now), funcID(got.Now))
			lo := got.logOptions()
			require.Equal(t, got.FS, lo.FS, "partition logs use the topic's FS")
			require.Equal(t, got.MaxPayloadSize, lo.MaxPayloadSize)
			require.Equal(t, funcID(got.Now), funcID(lo.Now))
		})
	}
}
