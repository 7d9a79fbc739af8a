package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/server/kafka"
)

// embedded is the embedded cluster as the server's wiring hands it to
// the listener.
func embedded(c *cluster.Cluster) *backend.Local { return &backend.Local{Cluster: c} }

// fixture is a cluster of brokers with the Kafka listener serving it on
// free loopback ports.
type fixture struct {
	c   *cluster.Cluster
	srv *kafka.Server
	// groups and registry are the group coordinator and its registry
	// when the fixture was started with withGroups.
	groups   *group.ClassicCoordinator
	registry *group.Registry
}

// start opens a cluster of brokers with topic "events" (partitions,
// replication factor rf) and serves it until the test ends.
func start(t testing.TB, brokers, partitions, rf int, edit ...func(*kafka.Config)) *fixture {
	t.Helper()
	return startOver(t, nil, brokers, partitions, rf, edit...)
}

// startOver is start with the listener serving wrap(the embedded
// cluster) when wrap is not nil: a test's hooks around the backend.
func startOver(t testing.TB, wrap func(kafka.Cluster) kafka.Cluster, brokers, partitions, rf int, edit ...func(*kafka.Config)) *fixture {
	t.Helper()
	c, err := cluster.Open(t.TempDir())
	require.NoError(t, err)
	for id := 1; id <= brokers; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("events", partitions, rf))
	cfg := kafka.Config{Host: "127.0.0.1", ReconcileEvery: 20 * time.Millisecond}
	for _, e := range edit {
		e(&cfg)
	}
	var kc kafka.Cluster = embedded(c)
	if wrap != nil {
		kc = wrap(kc)
	}
	srv, err := kafka.New(kc, cfg)
	require.NoError(t, err)
	f := &fixture{c: c, srv: srv}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	srv.Reconcile()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, c.Close())
	})
	return f
}

// startGroups is start with a group coordinator of the test's own that
// takes session timeouts from 50 ms, so that a test sees a session
// expire without waiting Kafka's 6 s minimum.
func startGroups(t *testing.T, brokers, partitions, rf int, edit ...func(*group.ClassicConfig)) *fixture {
	t.Helper()
	cfg := group.ClassicConfig{MinSessionTimeout: 50 * time.Millisecond}
	for _, e := range edit {
		e(&cfg)
	}
	reg := group.NewRegistry()
	groups := group.NewClassicCoordinator(reg, cfg)
	t.Cleanup(groups.Close)
	f := start(t, brokers, partitions, rf, func(c *kafka.Config) { c.Groups = groups })
	f.groups, f.registry = groups, reg
	return f
}

// client is a kgo client seeded with every broker's listener.
func (f *fixture) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	var seeds []string
	for _, b := range f.c.Brokers() {
		if a := f.srv.Addr(b.ID); a != "" {
			seeds = append(seeds, a)
		}
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.MetadataMinAge(20 * time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// ctx is a context bounded for one test step.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}
