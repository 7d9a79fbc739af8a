package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// OffsetStoreOptions: the zero value resolves to the defaults named on each
// field, and a field that is set is kept.
func TestOffsetStoreOptionsDefaults(t *testing.T) {
	type otherFS struct{ durable.FS }
	fsys := otherFS{durable.OS}
	tests := []struct {
		name string
		in   OffsetStoreOptions
		want OffsetStoreOptions
	}{
		{"zero", OffsetStoreOptions{}, OffsetStoreOptions{FS: durable.OS}},
		{"fs set", OffsetStoreOptions{FS: fsys}, OffsetStoreOptions{FS: fsys}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.in.withDefaults())
		})
	}
}
