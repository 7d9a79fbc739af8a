package log

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// otherFS is a file system other than durable.OS, to tell a kept FS from a
// defaulted one.
type otherFS struct{ durable.FS }

func fixedNow() time.Time { return time.Unix(1, 0) }

// funcID identifies a function value, which == cannot compare.
func funcID(f func() time.Time) uintptr { return reflect.ValueOf(f).Pointer() }

// Options: the zero value resolves to the defaults named on each field, and
// a field that is set is kept.
func TestLogOptionsDefaults(t *testing.T) {
	fsys := otherFS{durable.OS}
	tests := []struct {
		name string
		in   Options
		want Options
	}{
		{"zero", Options{}, Options{MaxPayloadSize: DefaultMaxPayloadSize, FS: durable.OS, Now: time.Now}},
		{"all set", Options{MaxPayloadSize: 10, FS: fsys, Now: fixedNow}, Options{MaxPayloadSize: 10, FS: fsys, Now: fixedNow}},
		{"payload only", Options{MaxPayloadSize: 10}, Options{MaxPayloadSize: 10, FS: durable.OS, Now: time.Now}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.WithDefaults()
			require.Equal(t, tt.want.MaxPayloadSize, got.MaxPayloadSize)
			require.Equal(t, tt.want.FS, got.FS)
			require.Equal(t, funcID(tt.want.Now), funcID(got.Now))
			require.NoError(t, got.validate())
		})
	}
}

// A MaxPayloadSize outside 1..MaxFramePayload is refused, after defaults.
func TestLogOptionsValidate(t *testing.T) {
	for _, size := range []int{-1, int(MaxFramePayload) + 1} {
		require.ErrorIs(t, Options{MaxPayloadSize: size}.WithDefaults().validate(), ErrInvalidArgument, "size %d", size)
	}
	require.NoError(t, Options{MaxPayloadSize: int(MaxFramePayload)}.WithDefaults().validate())
}
