package cluster

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/topic"
)

// AddPartitions (grow.go): the new partitions are placed as a creation of
// the topic with the new count would place them, the old ones keep their
// metadata and records, every new replica exists, a keyed record routes by
// the new count, and a reopened cluster has the new count.
func TestAddPartitionsPlacesAndCreates(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 2, 2))
	kept := sendN(t, NewProducer(c, "orders"), keyFor(t, 1, 2), 3)
	before := c.Metadata().Topics["orders"]

	require.NoError(t, c.AddPartitions("orders", 5))
	after := c.Metadata().Topics["orders"]
	require.Equal(t, 5, after.PartitionCount)
	require.Equal(t, before.Partitions, after.Partitions[:2], "the old partitions are untouched")
	want, err := NewTopicMetadata(c.Metadata().Brokers, 5, 2)
	require.NoError(t, err)
	require.Equal(t, want.Partitions[2:], after.Partitions[2:], "placed as a creation places them")
	info, err := c.Topic("orders")
	require.NoError(t, err)
	require.Equal(t, 5, info.PartitionCount)
	for _, pm := range after.Partitions[2:] {
		for _, id := range pm.Replicas {
			require.DirExists(t, ReplicaDir(root, id, "orders", pm.Partition))
		}
	}
	got, err := c.ReadCommitted("orders", 1, 0, 10)
	require.NoError(t, err)
	require.Len(t, got, len(kept), "the records written stay where they are")

	key := keyFor(t, 4, 5)
	res, err := NewProducer(c, "orders").Send([]byte(key), []byte("v"))
	require.NoError(t, err)
	require.Equal(t, 4, res.Partition, "a key routes by the new count")
	recs, err := c.ReadCommitted("orders", 4, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)

	c = reopen(t, c, root, 3)
	require.Equal(t, 5, c.Metadata().Topics["orders"].PartitionCount)
	recs, err = c.ReadCommitted("orders", 4, 0, 10)
	require.NoError(t, err)
	require.Len(t, recs, 1, "the new partition's record survives a restart")
}

// The refusals of AddPartitions change nothing: an unknown topic, a count
// not larger than the topic's, one past topic.MaxPartitionCount, new
// replica logs past Options.MaxOpenLogs.
func TestAddPartitionsRefusals(t *testing.T) {
	c, root := newFaultCluster(t, 3, Options{MaxOpenLogs: 10})
	require.NoError(t, c.CreateTopic("orders", 3, 2)) // 6 logs
	before := snapshot(t, root)

	require.ErrorIs(t, c.AddPartitions("nope", 4), ErrUnknownTopic)
	require.ErrorIs(t, c.AddPartitions("bad name", 4), ErrUnknownTopic)
	for _, n := range []int{-1, 0, 2, 3} {
		err := c.AddPartitions("orders", n)
		require.ErrorIs(t, err, ErrInvalidPartitionCount, "%d partitions", n)
		require.Contains(t, err.Error(), "has 3 partition(s)")
	}
	require.ErrorIs(t, c.AddPartitions("orders", topic.MaxPartitionCount+1), ErrInvalidPartitionCount)
	var limit *OpenLogsLimitError
	require.ErrorAs(t, c.AddPartitions("orders", 6), &limit) // 6 + 6 > 10
	require.Equal(t, OpenLogsLimitError{Topic: "orders", Requested: 6, Held: 6, Limit: 10}, *limit)
	require.Equal(t, before, snapshot(t, root), "a refusal changes nothing")
	require.Equal(t, 3, c.Metadata().Topics["orders"].PartitionCount)
	require.NoError(t, c.AddPartitions("orders", 5), "6 + 4 fits")
}

// A growth that fails part way (the N-th open of a new replica log, or the
// write of cluster.meta) is rolled back whole: no descriptor left open,
// every file as it was; the next growth succeeds.
func TestAddPartitionsRollsBack(t *testing.T) {
	faults := map[string]logtest.Fault{
		"open 1": logtest.FailNth(logtest.OpOpen, 1),
		"open 5": logtest.FailNth(logtest.OpOpen, 5),
		"cluster.meta": func(op logtest.Op, path string) error {
			if op == logtest.OpRename && strings.Contains(filepath.Base(path), MetaFileName) {
				return logtest.ErrInjected
			}
			return nil
		},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			fsys := logtest.NewFaultFS(nil)
			c, root := newFaultCluster(t, 3, Options{FS: fsys})
			require.NoError(t, c.CreateTopic("orders", 1, 3))
			sendN(t, NewProducer(c, "orders"), "k", 2)
			// Each broker's directory of the topic exists already.
			before := snapshot(t, root)
			fds := openFDs(t)

			fsys.SetFault(fault)
			require.ErrorIs(t, c.AddPartitions("orders", 4), logtest.ErrInjected)
			fsys.SetFault(nil)
			require.Equal(t, fds, openFDs(t))
			require.Equal(t, before, snapshot(t, root))
			require.Equal(t, 1, c.Metadata().Topics["orders"].PartitionCount)
			info, err := c.Topic("orders")
			require.NoError(t, err)
			require.Equal(t, 1, info.PartitionCount)

			require.NoError(t, c.AddPartitions("orders", 4))
			res, err := NewProducer(c, "orders").Send([]byte(keyFor(t, 3, 4)), []byte("v"))
			require.NoError(t, err)
			require.Equal(t, 3, res.Partition)
		})
	}
}

// Growths of one topic at once are decided one after the other: each on
// the count the last left, so one of two growths to the same count
// succeeds and the other is refused; a deletion meanwhile deletes the
// topic as grown.
func TestAddPartitionsConcurrent(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.AddPartitions("orders", 3)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			require.ErrorIs(t, err, ErrInvalidPartitionCount)
		}
	}
	require.Equal(t, 1, ok)
	require.Equal(t, 3, c.Metadata().Topics["orders"].PartitionCount)

	done := make(chan error, 1)
	go func() { done <- c.AddPartitions("orders", 6) }()
	res, err := c.DeleteTopic("orders")
	require.NoError(t, err)
	if gerr := <-done; gerr == nil {
		require.Equal(t, 6, res.PartitionCount, "the deletion waited for the growth")
	} else {
		require.ErrorIs(t, gerr, ErrUnknownTopic, "the growth came after the deletion")
		require.Equal(t, 3, res.PartitionCount)
	}
	require.NoError(t, c.CreateTopic("orders", 1, 2), "nothing of the grown topic is left")
	require.NoError(t, c.AddPartitions("orders", 2))
}

// Rule (OpAddPartitions): the metadata group grows a topic by the same
// rule (GrownTopicMetadata), keeping the old partitions as they are (a
// failover's epoch too); an unknown or deleted topic and a count not
// larger are refused, changing nothing.
func TestMetaStateAddPartitions(t *testing.T) {
	s := newMetaState(t, 3)
	mustApply(t, s, MetaCommand{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 2, ReplicationFactor: 2})
	old := s.Meta.Topics["orders"].Partitions
	mustApply(t, s, MetaCommand{Op: OpAddPartitions, Time: metaT0, Topic: "orders", Partitions: 4})
	got := s.Meta.Topics["orders"]
	want, err := NewTopicMetadata(s.Meta.Brokers, 4, 2)
	require.NoError(t, err)
	require.Equal(t, 4, got.PartitionCount)
	require.Equal(t, old, got.Partitions[:2])
	require.Equal(t, want.Partitions[2:], got.Partitions[2:])

	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpAddPartitions, Time: metaT0, Topic: "orders", Partitions: 4}), ErrInvalidPartitionCount)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpAddPartitions, Time: metaT0, Topic: "nope", Partitions: 4}), ErrUnknownTopic)
	mustApply(t, s, MetaCommand{Op: OpDeleteTopic, Time: metaT0, Topic: "orders"})
	err = applyRefused(t, s, MetaCommand{Op: OpAddPartitions, Time: metaT0, Topic: "orders", Partitions: 5})
	require.ErrorIs(t, err, ErrUnknownTopic)
	require.Contains(t, err.Error(), "still removing its files")
}
