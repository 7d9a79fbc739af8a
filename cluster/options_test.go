package cluster

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
)

// otherFS is a file system other than durable.OS, to tell a kept FS from a
// defaulted one.
type otherFS struct {
	durable.FS
	name string
}

func fixedNow() time.Time { return time.Unix(1, 0) }

// funcID identifies a function value, which == cannot compare.
func funcID(f func() time.Time) uintptr { return reflect.ValueOf(f).Pointer() }

func requireBrokerOptions(t *testing.T, want, got BrokerOptions) {
	t.Helper()
	require.Equal(t, want.FS, got.FS)
	require.Equal(t, want.MaxPayloadSize, got.MaxPayloadSize)
	require.Equal(t, funcID(want.Now), funcID(got.Now))
	lo := got.logOptions()
	require.Equal(t, got.FS, lo.FS, "replica logs use the broker's FS")
	require.Equal(t, got.MaxPayloadSize, lo.MaxPayloadSize)
	require.Equal(t, funcID(got.Now), funcID(lo.Now))
}

// BrokerOptions: the zero value resolves to the defaults named on each
// field, and a field that is set is kept.
func TestBrokerOptionsDefaults(t *testing.T) {
	fsys := otherFS{durable.OS, "broker"}
	defaults := BrokerOptions{FS: durable.OS, MaxPayloadSize: log.DefaultMaxPayloadSize, Now: time.Now}
	tests := []struct {
		name string
		in   BrokerOptions
		want BrokerOptions
	}{
		{"zero", BrokerOptions{}, defaults},
		{"all set", BrokerOptions{FS: fsys, MaxPayloadSize: 10, Now: fixedNow}, BrokerOptions{FS: fsys, MaxPayloadSize: 10, Now: fixedNow}},
		{"now only", BrokerOptions{Now: fixedNow}, BrokerOptions{FS: durable.OS, MaxPayloadSize: log.DefaultMaxPayloadSize, Now: fixedNow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireBrokerOptions(t, tt.want, tt.in.withDefaults())
		})
	}
}

// Options: the zero value resolves to the defaults named on each field
// (a nil Broker.FS means FS), and a field that is set is kept.
func TestClusterOptionsDefaults(t *testing.T) {
	clusterFS, brokerFS := otherFS{durable.OS, "cluster"}, otherFS{durable.OS, "broker"}
	tests := []struct {
		name       string
		in         Options
		wantFS     durable.FS
		wantBroker BrokerOptions
		wantPLW    bool
	}{
		{"zero", Options{}, durable.OS,
			BrokerOptions{FS: durable.OS, MaxPayloadSize: log.DefaultMaxPayloadSize, Now: time.Now}, false},
		{"fs only: brokers share it", Options{FS: clusterFS}, clusterFS,
			BrokerOptions{FS: clusterFS, MaxPayloadSize: log.DefaultMaxPayloadSize, Now: time.Now}, false},
		{"all set", Options{FS: clusterFS, Broker: BrokerOptions{FS: brokerFS, MaxPayloadSize: 10, Now: fixedNow}, ParallelLeaderWrite: true}, clusterFS,
			BrokerOptions{FS: brokerFS, MaxPayloadSize: 10, Now: fixedNow}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.withDefaults()
			require.Equal(t, tt.wantFS, got.FS)
			require.Equal(t, tt.wantPLW, got.ParallelLeaderWrite)
			requireBrokerOptions(t, tt.wantBroker, got.Broker)
		})
	}
}
