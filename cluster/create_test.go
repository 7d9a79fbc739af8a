package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// openFDs counts the process's open file descriptors (Linux only).
func openFDs(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// newFaultCluster is newCluster with every broker on fsys.
func newFaultCluster(t *testing.T, n int, opts Options) (*Cluster, string) {
	t.Helper()
	root := t.TempDir()
	c, err := OpenWithOptions(root, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= n; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	return c, root
}

// docs/design.md § Creating a topic, rollback: a creation that fails part
// way (here the N-th open of a replica log, as "too many open files" would)
// is rolled back whole — every replica log it opened closed (the process
// holds as many descriptors as before), every directory it created
// removed, every other file byte for byte as it was — and the next
// creation, of the same name or another, succeeds.
func TestCreateTopicRollsBackAFailedCreation(t *testing.T) {
	for _, nth := range []int{1, 2, 7, 12} {
		fsys := logtest.NewFaultFS(nil)
		c, root := newFaultCluster(t, 3, Options{FS: fsys})
		require.NoError(t, c.CreateTopic("orders", 1, 3))
		sendN(t, NewProducer(c, "orders"), "k", 2)
		before := snapshot(t, root)
		meta := c.Metadata()
		fds := openFDs(t)

		fsys.SetFault(logtest.FailNth(logtest.OpOpen, nth))
		err := c.CreateTopic("big", 4, 3) // 12 replica logs
		require.ErrorIs(t, err, logtest.ErrInjected, "fails at open %d", nth)
		fsys.SetFault(nil)

		require.Equal(t, fds, openFDs(t), "open %d failed: every descriptor the creation opened is closed", nth)
		require.Equal(t, before, snapshot(t, root), "open %d failed: nothing of the creation is left on disk", nth)
		for id := 1; id <= 3; id++ {
			require.NoDirExists(t, topicDir(root, id, "big"))
		}
		require.Equal(t, meta, c.Metadata(), "cluster.meta untouched")
		_, err = c.Topic("big")
		require.ErrorIs(t, err, ErrUnknownTopic)

		require.NoError(t, c.CreateTopic("small", 1, 1), "the next small creation succeeds")
		require.NoError(t, c.CreateTopic("big", 4, 3), "so does the same creation again")
		for p := range 4 {
			hw, err := c.HighWatermark("big", p)
			require.NoError(t, err)
			require.Zero(t, hw)
		}
		_, err = NewProducer(c, "big").Send([]byte("k"), []byte("v"))
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
}

// A creation that fails at its commit point (the write of cluster.meta) is
// rolled back the same way.
func TestCreateTopicRollsBackAFailedMetadataWrite(t *testing.T) {
	fsys := logtest.NewFaultFS(nil)
	c, root := newFaultCluster(t, 3, Options{FS: fsys})
	// Each broker's topics/ directory is its own, kept once made.
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	before := snapshot(t, root)
	fds := openFDs(t)
	fsys.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpRename && strings.Contains(filepath.Base(path), MetaFileName) {
			return logtest.ErrInjected
		}
		return nil
	})
	require.ErrorIs(t, c.CreateTopic("big", 8, 3), logtest.ErrInjected)
	fsys.SetFault(nil)
	require.Equal(t, fds, openFDs(t))
	require.Equal(t, before, snapshot(t, root))
	require.NoError(t, c.CreateTopic("big", 8, 3))
}

// docs/design.md § Creating a topic, limits: a creation whose replica logs would take the
// cluster past Options.MaxOpenLogs is refused before anything is created,
// naming the limit; deleting a topic frees its share.
func TestCreateTopicOpenLogsLimit(t *testing.T) {
	c, root := newFaultCluster(t, 3, Options{MaxOpenLogs: 10})
	require.NoError(t, c.CreateTopic("a", 3, 3)) // 9
	before := snapshot(t, root)
	err := c.CreateTopic("b", 1, 2) // 9 + 2 > 10
	var limit *OpenLogsLimitError
	require.ErrorAs(t, err, &limit)
	require.ErrorIs(t, err, ErrOpenLogsLimit)
	require.Equal(t, OpenLogsLimitError{Topic: "b", Requested: 2, Held: 9, Limit: 10}, *limit)
	require.Contains(t, err.Error(), "limit of 10")
	require.Equal(t, before, snapshot(t, root), "a refused creation changes nothing")
	require.NoError(t, c.CreateTopic("b", 1, 1), "9 + 1 fits")
	_, err = c.DeleteTopic("a")
	require.NoError(t, err)
	require.NoError(t, c.CreateTopic("c", 3, 3), "1 + 9 fits once a is deleted")
}

// The default limit leaves headroom below the process's file limit.
func TestCreateTopicDefaultMaxOpenLogs(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{
		{0, -1}, {-5, -1}, {1, 1}, {4, 2}, {256, 128}, {512, 256}, {1024, 768}, {4096, 3072}, {1 << 20, 3 << 18},
	} {
		require.Equal(t, tc.want, DefaultMaxOpenLogs(tc.limit), "file limit %d", tc.limit)
	}
	c, _ := newCluster(t, 1)
	if fl := FileLimit(); fl > 0 {
		require.Equal(t, DefaultMaxOpenLogs(fl), c.opts.MaxOpenLogs)
	}
}

// docs/design.md § Creating a topic, limits: a name that differs only in letter case from
// an existing topic's (or one being created) is refused, naming it: on a
// file system that ignores case both would be one directory.
func TestCreateTopicRefusesCaseTwins(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("Orders", 2, 3))
	before := snapshot(t, root)
	for _, name := range []string{"orders", "ORDERS", "oRdErS"} {
		err := c.CreateTopic(name, 2, 3)
		var twin *TopicNameConflictError
		require.ErrorAs(t, err, &twin, name)
		require.ErrorIs(t, err, ErrTopicNameConflict)
		require.Equal(t, TopicNameConflictError{Topic: name, Existing: "Orders"}, *twin)
	}
	require.Equal(t, before, snapshot(t, root))
	var exists *TopicExistsError
	require.ErrorAs(t, c.CreateTopic("Orders", 2, 3), &exists, "the same name is the same topic")
	_, err := c.DeleteTopic("Orders")
	require.NoError(t, err)
	require.NoError(t, c.CreateTopic("orders", 1, 3), "free once the twin is deleted")
}

// Concurrent creations of one name: exactly one creates the topic, the
// others wait for it and see it exist; a deletion meanwhile finds either
// no topic or the whole one.
func TestCreateTopicConcurrentSameName(t *testing.T) {
	c, _ := newCluster(t, 3)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = c.CreateTopic("orders", 16, 3) })
	}
	wg.Go(func() {
		if _, err := c.DeleteTopic("orders"); err != nil && !errors.Is(err, ErrUnknownTopic) {
			t.Errorf("delete: %v", err)
		}
	})
	wg.Wait()
	created := 0
	for _, err := range errs {
		var exists *TopicExistsError
		switch {
		case err == nil:
			created++
		case errors.As(err, &exists):
			require.True(t, exists.SameSettings)
		default:
			t.Fatalf("create: %v", err)
		}
	}
	require.GreaterOrEqual(t, created, 1)
	require.LessOrEqual(t, created, 2, "at most once before and once after the deletion")
	if _, err := c.Topic("orders"); err == nil {
		_, err := NewProducer(c, "orders").Send([]byte("k"), []byte("v"))
		require.NoError(t, err)
	}
}

// docs/design.md § Creating a topic, no stall: while a creation does its file I/O (held here
// inside the open of its first replica log), sends to another topic and
// the cluster's read-only calls go on.
func TestCreateTopicDoesNotStallOtherTopics(t *testing.T) {
	fsys := logtest.NewFaultFS(nil)
	c, _ := newFaultCluster(t, 3, Options{FS: fsys})
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	fsys.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpMkdir && strings.Contains(path, string(filepath.Separator)+"big") {
			once.Do(func() { close(inside); <-release })
		}
		return nil
	})
	created := make(chan error, 1)
	go func() { created <- c.CreateTopic("big", 64, 3) }()
	<-inside
	done := make(chan error, 1)
	go func() {
		_, err := NewProducer(c, "orders").Send([]byte("k"), []byte("v"))
		if err == nil {
			_ = c.Topics()
			_, err = c.ReadCommitted("orders", 0, 0, 10)
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a send to another topic waited for the creation")
	}
	_, err := c.Topic("big")
	require.ErrorIs(t, err, ErrUnknownTopic, "not there before its commit")
	close(release)
	require.NoError(t, <-created)
	_, err = c.Topic("big")
	require.NoError(t, err)
}

// A replica directory of a name no topic holds is removed by the next
// creation of the name when it holds only empty files (what a crashed
// creation leaves); one holding records is no creation's, and is left
// alone, the creation refused.
func TestCreateTopicLeftovers(t *testing.T) {
	c, root := newCluster(t, 3)
	empty := replicaPath(root, 2, "orders", 5)
	require.NoError(t, os.MkdirAll(filepath.Dir(empty), 0o755))
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	require.NoDirExists(t, filepath.Dir(empty), "the leftover partition is gone")

	full := replicaPath(root, 1, "other", 0)
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte("x"), 0o644))
	before := snapshot(t, root)
	require.ErrorIs(t, c.CreateTopic("other", 1, 3), ErrTopicExists)
	require.Equal(t, before, snapshot(t, root), "refused: nothing touched")
}
