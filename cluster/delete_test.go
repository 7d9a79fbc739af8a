package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// topicDir is broker id's directory of a topic's replicas.
func topicDir(root string, id int, name string) string {
	return filepath.Join(BrokerDir(root, id), brokerTopicsDir, name)
}

// requireNoTopicFiles checks that no broker of 1..n holds a directory of
// the topic and that no consumer offset file of it is left.
func requireNoTopicFiles(t *testing.T, root string, n int, name string) {
	t.Helper()
	for id := 1; id <= n; id++ {
		require.NoDirExists(t, topicDir(root, id, name), "broker %d", id)
	}
	consumers, err := os.ReadDir(filepath.Join(root, "offsets"))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	require.NoError(t, err)
	for _, ce := range consumers {
		files, err := os.ReadDir(filepath.Join(root, "offsets", ce.Name(), name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		for _, f := range files {
			_, ok := client.ParseOffsetFileName(f.Name())
			require.False(t, ok, "offset file %s of consumer %s left", f.Name(), ce.Name())
		}
	}
}

func commit(t *testing.T, c *Cluster, consumer, name string, p int, off uint64) {
	t.Helper()
	store, err := c.OffsetStore()
	require.NoError(t, err)
	require.NoError(t, store.Commit(consumer, name, p, off))
}

func loadOffset(t *testing.T, c *Cluster, consumer, name string, p int) (uint64, bool) {
	t.Helper()
	store, err := c.OffsetStore()
	require.NoError(t, err)
	off, ok, err := store.Load(consumer, name, p)
	require.NoError(t, err)
	return off, ok
}

// docs/design.md § Deleting a topic: the topic leaves cluster.meta, every
// broker's replica directory and every consumer's offsets of it are
// removed, the journal holds the intent and its outcome, and other topics
// are untouched.
func TestDeleteTopic(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 3, 2))
	require.NoError(t, c.CreateTopic("keep", 1, 3))
	for p := range 3 {
		sendN(t, NewProducer(c, "orders"), keyFor(t, p, 3), 2)
	}
	kept := sendN(t, NewProducer(c, "keep"), "k", 2)
	commit(t, c, "billing", "orders", 0, 2)
	commit(t, c, "billing", "orders", 2, 1)
	commit(t, c, "audit", "orders", 1, 2)
	commit(t, c, "billing", "keep", 0, 1)
	before := len(journalOf(t, c))

	res, err := c.DeleteTopic("orders")
	require.NoError(t, err)
	require.Equal(t, DeleteTopicResult{Topic: "orders", PartitionCount: 3, ReplicationFactor: 2, OffsetFiles: 3}, res)

	require.Equal(t, []TopicInfo{{Name: "keep", PartitionCount: 1, ReplicationFactor: 3}}, c.Topics())
	_, err = c.Topic("orders")
	require.ErrorIs(t, err, ErrUnknownTopic)
	require.NotContains(t, c.Metadata().Topics, "orders")
	requireNoTopicFiles(t, root, 3, "orders")
	for id := 1; id <= 3; id++ {
		require.DirExists(t, filepath.Join(BrokerDir(root, id), brokerTopicsDir), "the broker's topics/ stays")
	}
	store, err := c.OffsetStore()
	require.NoError(t, err)
	list, err := store.List("billing")
	require.NoError(t, err)
	require.Equal(t, []client.CommittedOffset{{Topic: "keep", Partition: 0, Offset: 1}}, list)

	entries := journalOf(t, c)[before:]
	require.Equal(t, []string{"delete-topic intent operator", "delete-topic done operator"}, events(entries))
	require.Equal(t, "orders: delete 3 partition(s), replication factor 2, replicas on brokers [1 2 3], and its consumer offsets", entries[0].Summary)
	require.Equal(t, "orders: replica directories removed from brokers [1 2 3], 3 consumer offset(s) removed", entries[1].Summary)
	for _, e := range entries {
		require.Equal(t, "orders", e.Topic)
		require.Nil(t, e.Before)
		require.Nil(t, e.After)
	}
	require.Equal(t, entries[0].Offset, *entries[1].Intent)

	got, err := c.ReadCommitted("keep", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, got, len(kept))

	// It stays deleted, and the journal needs nothing from Open.
	c = reopen(t, c, root, 3)
	require.NotContains(t, c.Metadata().Topics, "orders")
	require.Len(t, journalOf(t, c), before+2+3, "three broker starts, no outcome added")
	off, ok := loadOffset(t, c, "billing", "keep", 0)
	require.True(t, ok)
	require.Equal(t, uint64(1), off)
}

// An unknown topic is ErrUnknownTopic and changes nothing, the journal
// included; so is a second delete, and a name that is not a topic name.
func TestDeleteTopicUnknown(t *testing.T) {
	c, root := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	before := snapshot(t, root)
	n := len(journalOf(t, c))
	_, err := c.DeleteTopic("nope")
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.DeleteTopic("../broker-000001")
	require.ErrorIs(t, err, ErrUnknownTopic)
	require.Equal(t, before, snapshot(t, root))
	require.Len(t, journalOf(t, c), n)

	_, err = c.DeleteTopic("orders")
	require.NoError(t, err)
	_, err = c.DeleteTopic("orders")
	require.ErrorIs(t, err, ErrUnknownTopic)
	require.Len(t, journalOf(t, c), n+2)

	require.NoError(t, c.Close())
	_, err = c.DeleteTopic("orders")
	require.ErrorIs(t, err, ErrClosed)
}

// After a delete, everything that names the topic is refused with
// ErrUnknownTopic: sends (also through a producer made before), reads,
// status, consumers and every operation.
func TestDeleteTopicRefusesLaterUse(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 2, 3))
	p := NewProducer(c, "orders")
	sendN(t, p, "k", 2)
	src, err := c.Source("orders")
	require.NoError(t, err)
	_, err = c.DeleteTopic("orders")
	require.NoError(t, err)

	_, err = p.Send([]byte("k"), []byte("late"))
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = p.SendBatch([]topic.Message{{Payload: []byte("late")}})
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.ReadCommitted("orders", 0, 0, 10)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = src.Read(0, 0, 10)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.HighWatermark("orders", 0)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.Status("orders", 1)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.NewConsumer("billing", "orders", 0)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.Source("orders")
	require.ErrorIs(t, err, ErrUnknownTopic)
	require.NoError(t, c.StopBroker(1))
	_, err = c.Failover("orders", 0)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.CatchUp("orders", 0, 2)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.MoveLeader("orders", 0, 2)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.Deactivate("orders", 0, 2)
	require.ErrorIs(t, err, ErrUnknownTopic)
	_, err = c.RecoverReplica("orders", 0, 1)
	require.ErrorIs(t, err, ErrUnknownTopic)
}

// A partition's state held from before the delete (a call that looked the
// topic up and then waited) is refused too: the partitions themselves are
// marked deleted, not only the name forgotten.
func TestDeleteTopicRefusesHeldPartitions(t *testing.T) {
	c, _ := newCluster(t, 2)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	p, err := c.partition("orders", 0)
	require.NoError(t, err)
	_, err = c.DeleteTopic("orders")
	require.NoError(t, err)
	err = c.submit(p, &sendRequest{payloads: [][]byte{[]byte("x")}, done: make(chan struct{})})
	require.ErrorIs(t, err, ErrUnknownTopic)
	p.lockIdle()
	_, err = c.partitionMeta(p)
	require.ErrorIs(t, err, ErrUnknownTopic)
	c.unlockIdle(p)
	require.ErrorIs(t, c.gone(p), ErrUnknownTopic)
}

// A topic created again under a deleted name is a new topic: empty, with
// the new settings, no consumer's offset, and offsets commit into it
// through the same offset store as before.
func TestDeleteTopicRecreateIsEmpty(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 2, 3))
	sendN(t, NewProducer(c, "orders"), "k", 5)
	commit(t, c, "billing", "orders", 0, 3)
	commit(t, c, "billing", "orders", 1, 2)
	_, err := c.DeleteTopic("orders")
	require.NoError(t, err)

	require.NoError(t, c.CreateTopic("orders", 1, 2))
	info, err := c.Topic("orders")
	require.NoError(t, err)
	require.Equal(t, TopicInfo{Name: "orders", PartitionCount: 1, ReplicationFactor: 2}, info)
	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Zero(t, hw)
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	for _, rs := range st.Replicas {
		require.NoError(t, rs.Err)
		require.Zero(t, *rs.LogEnd, "broker %d", rs.BrokerID)
	}
	_, ok := loadOffset(t, c, "billing", "orders", 0)
	require.False(t, ok, "no offset inherited")
	res, err := NewProducer(c, "orders").Send(nil, []byte("new"))
	require.NoError(t, err)
	require.Zero(t, res.Offset)
	commit(t, c, "billing", "orders", 0, 1)
	off, ok := loadOffset(t, c, "billing", "orders", 0)
	require.True(t, ok)
	require.Equal(t, uint64(1), off)

	cons, err := c.NewConsumer("billing", "orders", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), cons.Position(), "the consumer starts at the new topic's offset")

	c = reopen(t, c, root, 3)
	got, err := c.ReadCommitted("orders", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "new", string(got[0].Payload))
}

// A consumer of the deleted topic that commits after the delete (it
// loaded the topic before) leaves an offset under the name; the topic
// created again does not inherit it.
func TestDeleteTopicStaleCommitNotInherited(t *testing.T) {
	c, _ := newCluster(t, 1)
	require.NoError(t, c.CreateTopic("orders", 1, 1))
	_, err := c.DeleteTopic("orders")
	require.NoError(t, err)
	commit(t, c, "billing", "orders", 0, 7) // the offset store checks no topic
	require.NoError(t, c.CreateTopic("orders", 1, 1))
	_, ok := loadOffset(t, c, "billing", "orders", 0)
	require.False(t, ok)
}

// Sends in flight while the topic is deleted either are acknowledged
// before the delete or fail with ErrUnknownTopic: none hangs, none fails
// otherwise, and readers see the topic or ErrUnknownTopic.
func TestDeleteTopicWaitsForWritesInFlight(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 2, 3))
	p := NewProducer(c, "orders")
	const writers = 8
	var acked atomic.Int64
	started := make(chan struct{}, writers)
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				var err error
				if w%2 == 0 {
					_, err = p.Send(nil, []byte("x"))
				} else {
					_, err = p.SendBatch([]topic.Message{{Payload: []byte("a")}, {Payload: []byte("b")}})
				}
				if i == 2 {
					started <- struct{}{}
				}
				if err != nil {
					errs <- err
					return
				}
				acked.Add(1)
			}
		})
		wg.Go(func() {
			for {
				_, err := c.ReadCommitted("orders", w%2, 0, 100)
				if err == nil {
					_, err = c.Status("orders", w%2)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range writers {
		<-started
	}
	_, err := c.DeleteTopic("orders")
	require.NoError(t, err)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, ErrUnknownTopic)
	}
	require.Positive(t, acked.Load())
	requireNoTopicFiles(t, root, 3, "orders")
	require.NoError(t, c.CreateTopic("orders", 2, 3))
	for part := range 2 {
		hw, err := c.HighWatermark("orders", part)
		require.NoError(t, err)
		require.Zero(t, hw)
	}
}

// A stopped broker's replicas are deleted too: its directory is the
// cluster's, and it opens none of them when it starts again.
func TestDeleteTopicWithStoppedBroker(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	sendN(t, NewProducer(c, "orders"), "k", 2)
	require.NoError(t, c.StopBroker(2))
	_, err := c.DeleteTopic("orders")
	require.NoError(t, err)
	requireNoTopicFiles(t, root, 3, "orders")
	_, err = c.StartBroker(2)
	require.NoError(t, err)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	for _, rs := range st.Replicas {
		require.Zero(t, *rs.LogEnd)
	}
}

// When cluster.meta cannot be written, nothing is deleted: the topic is
// whole and takes writes, and the journal says failed.
func TestDeleteTopicMetadataWriteFails(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	root := t.TempDir()
	c, err := OpenWithOptions(root, Options{FS: ffs})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	for id := 1; id <= 2; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	sendN(t, NewProducer(c, "orders"), "k", 2)
	commit(t, c, "billing", "orders", 0, 2)
	before := snapshot(t, root)

	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpRename && filepath.Base(path) == MetaFileName {
			return logtest.ErrInjected
		}
		return nil
	})
	_, err = c.DeleteTopic("orders")
	require.ErrorIs(t, err, logtest.ErrInjected)
	ffs.SetFault(nil)
	require.Equal(t, before, snapshot(t, root))
	entries := journalOf(t, c)
	require.Equal(t, []string{"delete-topic intent operator", "delete-topic failed operator"}, events(entries[len(entries)-2:]))
	_, err = NewProducer(c, "orders").Send(nil, []byte("c"))
	require.NoError(t, err)
	got, err := c.ReadCommitted("orders", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, got, 3)

	_, err = c.DeleteTopic("orders")
	require.NoError(t, err, "a failed delete can be asked again")
}

// When the files cannot be removed, the topic is deleted all the same
// (ErrDeleteUnfinished) and its name is blocked: CreateTopic finishes the
// removal first, and fails while it cannot. The same holds when Open
// finds the removal unfinished: it opens, and CreateTopic finishes it.
func TestDeleteTopicUnfinished(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	root := t.TempDir()
	open := func() *Cluster {
		c, err := OpenWithOptions(root, Options{FS: ffs})
		require.NoError(t, err, "start-up never fails because of a deletion")
		t.Cleanup(func() { _ = c.Close() })
		for id := 1; id <= 2; id++ {
			_, err := c.StartBroker(id)
			require.NoError(t, err)
		}
		return c
	}
	c := open()
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	sendN(t, NewProducer(c, "orders"), "k", 2)
	failRemoves := func(op logtest.Op, path string) error {
		if op == logtest.OpRemove && strings.Contains(path, string(filepath.Separator)+"orders") {
			return logtest.ErrInjected
		}
		return nil
	}

	ffs.SetFault(failRemoves)
	_, err := c.DeleteTopic("orders")
	require.ErrorIs(t, err, ErrDeleteUnfinished)
	require.ErrorIs(t, err, logtest.ErrInjected)
	_, err = c.Topic("orders")
	require.ErrorIs(t, err, ErrUnknownTopic, "deleted all the same")
	require.Empty(t, c.Topics())
	err = c.CreateTopic("orders", 1, 2)
	require.ErrorIs(t, err, ErrDeleteUnfinished, "the old files are still there")
	require.DirExists(t, topicDir(root, 1, "orders"))
	entries := journalOf(t, c)
	require.Equal(t, PhaseIntent, entries[len(entries)-1].Phase, "no outcome yet")

	ffs.SetFault(nil)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	entries = journalOf(t, c)
	require.Equal(t, "delete-topic done operator", events(entries[len(entries)-1:])[0])
	hw, err := c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Zero(t, hw)

	// Again, and the process stops with the removal unfinished.
	_, err = NewProducer(c, "orders").Send(nil, []byte("x"))
	require.NoError(t, err)
	ffs.SetFault(failRemoves)
	_, err = c.DeleteTopic("orders")
	require.ErrorIs(t, err, ErrDeleteUnfinished)
	require.NoError(t, c.Close())
	c = open()
	require.Empty(t, c.Topics())
	require.ErrorIs(t, c.CreateTopic("orders", 1, 2), ErrDeleteUnfinished)
	ffs.SetFault(nil)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	entries = journalOf(t, c)
	last := entries[len(entries)-1]
	require.Equal(t, "delete-topic completed startup", events([]JournalEntry{last})[0])
	hw, err = c.HighWatermark("orders", 0)
	require.NoError(t, err)
	require.Zero(t, hw)
}

// The journal's delete-topic entries name a topic and carry no
// leadership.
func TestJournalEntryDeleteTopic(t *testing.T) {
	good := `{"event":"delete-topic","phase":"intent","by":"operator","topic":"orders","partition":0,"broker":0,"summary":"s"}`
	_, err := ParseJournalEntry([]byte(good))
	require.NoError(t, err)
	for name, data := range map[string]string{
		"no topic": strings.Replace(good, `"topic":"orders",`, ``, 1),
		"before":   strings.Replace(good, `"summary"`, `"before":{"partition":0,"leader":1,"leader_epoch":0,"replicas":[1],"active":[1]},"summary"`, 1),
	} {
		_, err := ParseJournalEntry([]byte(data))
		require.ErrorIs(t, err, ErrInvalidArgument, name)
	}
}
