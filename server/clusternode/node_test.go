package clusternode_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/clusternode"
	"github.com/pystream/pystream/server/clustertest"
	"github.com/pystream/pystream/topic"
)

// topicNames are the names of node via's topics, ascending.
func topicNames(c *clustertest.Cluster, via int) []string {
	var out []string
	for _, ti := range c.Node(via).Cluster().Topics() {
		out = append(out, ti.Name)
	}
	return out
}

// TestNodeRegistration pins membership.go and node.go's register: every
// node registers its addresses through Raft, once a leader is known, so
// that every node lists every broker at the internal and client
// addresses it gave, names the same controller and the same voters, and
// journals each broker's arrival.
func TestNodeRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := start(t, 3, clustertest.Options{})
		ctl := c.Controller()
		// Ready, a node has applied the metadata up to its own
		// registration; the others' may come after it.
		c.Await("every node lists every node registered", func() (bool, string) {
			for _, id := range c.IDs() {
				if nodes := c.Node(id).Nodes(); len(nodes) != 3 {
					return false, fmt.Sprintf("node %d lists %v", id, nodes)
				}
			}
			return true, ""
		})
		for _, id := range c.IDs() {
			nodes := c.Node(id).Nodes()
			require.Len(t, nodes, 3, "node %d", id)
			for i, info := range nodes {
				require.Equal(t, i+1, info.ID, "node %d lists %v", id, nodes)
				require.Equal(t, c.Addr(info.ID), info.Addr, "node %d lists %v", id, nodes)
				require.Equal(t, fmt.Sprintf("127.0.0.1:%d", 18000+info.ID), info.HTTPAddr, "node %d lists %v", id, nodes)
			}
			controller, views, err := c.Node(id).ClusterNodes()
			require.NoError(t, err)
			require.Equal(t, ctl, controller, "node %d", id)
			require.Len(t, views, 3)
			for _, v := range views {
				require.True(t, v.Voter, "node %d: %+v", id, v)
				require.Equal(t, v.ID == ctl, v.Leader, "node %d: %+v", id, v)
				require.Equal(t, c.Addr(v.ID), v.Addr)
			}
			var started []int
			for i, e := range journal(t, c, id) {
				require.Equal(t, uint64(i), e.Offset, "journal offsets count from 0")
				if e.Event == cluster.EventBrokerStart {
					started = append(started, e.Broker)
				}
			}
			slices.Sort(started)
			require.Equal(t, []int{1, 2, 3}, started, "node %d's journal names every broker's registration", id)
		}
	})
}

// TestNodeAnyNodeWrites pins doc.go's "Any node answers" and "Writes": a
// write through any node reaches its partition's leader — forwarded over
// the internal API when the node does not lead it — and is acknowledged
// once every active replica holds it; one key routes to one partition
// through every node, each routing over its own copy of the metadata; a
// partition out of range is refused before anything is written; and then
// every replica's files hold the same records at the same offsets, which
// every node reads back below the same high watermark.
func TestNodeAnyNodeWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "orders"
		const partitions = 3
		c := start(t, 3, clustertest.Options{})
		require.NoError(t, c.Via(others(c, c.Controller())[0]).CreateTopic(name, partitions, 3))
		sent := map[int][]log.Record{}
		keyed := -1
		for _, via := range c.IDs() {
			payload := fmt.Sprintf("keyed via %d", via)
			res, err := cluster.NewProducer(c.Via(via), name).Send([]byte("customer-7"), []byte(payload))
			require.NoError(t, err, "keyed send through node %d", via)
			if keyed == -1 {
				keyed = res.Partition
			}
			require.Equal(t, keyed, res.Partition, "one key routes to one partition through every node")
			require.Equal(t, uint64(len(sent[keyed])), res.Offset)
			require.Equal(t, []int{1, 2, 3}, res.Brokers)
			require.Equal(t, statusVia(t, c, via, name, keyed).Leader, res.LeaderBrokerID)
			sent[keyed] = append(sent[keyed], log.Record{Offset: res.Offset, Timestamp: res.Timestamp, Payload: []byte(payload)})
			for p := range partitions {
				recs, res := send(t, c, via, name, p, fmt.Sprintf("p%d via %d", p, via))
				require.Equal(t, uint64(len(sent[p])), res[0].Offset, "%s/%d through node %d", name, p, via)
				require.Equal(t, []int{1, 2, 3}, res[0].Brokers)
				sent[p] = append(sent[p], recs...)
			}
		}
		_, err := cluster.NewProducer(c.Via(1), name).SendBatchTo(partitions, msgs("x"))
		require.ErrorIs(t, err, topic.ErrPartitionOutOfRange)
		for p := range partitions {
			for _, id := range c.IDs() {
				sameRecords(t, sent[p], replicaRecords(t, c, id, name, p), "%s/%d: broker %d's replica", name, p, id)
				sameRecords(t, sent[p], readAll(t, c, id, name, p), "%s/%d read through node %d", name, p, id)
				recs, err := c.Via(id).ReadCommitted(name, p, 1, 1)
				require.NoError(t, err)
				sameRecords(t, sent[p][1:2], recs, "a read from the middle, bounded")
				hw, err := c.Via(id).HighWatermark(name, p)
				require.NoError(t, err)
				require.Equal(t, uint64(len(sent[p])), hw, "%s/%d through node %d", name, p, id)
			}
		}
	})
}

// TestNodeReadyAfterRegistration pins node.go's register and Ready: a node
// restarted on its data directory proposes its registration again, though
// the metadata it replays names it already, and it is not ready — its
// metadata not current — until that proposal is answered and applied
// here; from then on its copy is at least as recent as its start, so its
// Cluster lists every topic, those created while it was down too. Cut off
// from the others' internal API (its proposal cannot reach the leader)
// while Raft still brings it the metadata, it stays not ready however
// long it waits.
func TestNodeReadyAfterRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Manual mode: nothing fails over while a node is down or cut off.
		c := start(t, 3, clustertest.Options{FailoverAfter: -1})
		ctl := c.Controller()
		x := others(c, ctl)[0]
		require.NoError(t, c.Via(ctl).CreateTopic("before", 1, 3))
		want := []string{"before"}
		for round, cut := range []bool{false, true} {
			c.Stop(x)
			name := fmt.Sprintf("while-down-%d", round)
			require.NoError(t, c.Via(ctl).CreateTopic(name, 2, 3))
			want = append(want, name)
			if cut {
				c.Net.Isolate(c.Addr(x))
			}
			c.Restart(x)
			n := c.Node(x)
			ok, _ := n.Ready()
			require.False(t, ok, "ready the moment it opened")
			if cut {
				c.Await("the metadata replayed through Raft", func() (bool, string) {
					got := topicNames(c, x)
					return slices.Equal(got, want) && n.Controller() == ctl, fmt.Sprintf("topics %v, controller %d", got, n.Controller())
				})
				time.Sleep(10 * time.Second)
				ok, why := n.Ready()
				require.False(t, ok, "ready without its registration answered")
				require.Contains(t, strings.Join(why, "; "), "not yet registered")
				require.False(t, n.Cluster().MetadataCurrent())
				c.Net.Heal()
			}
			c.Await(fmt.Sprintf("node %d ready", x), func() (bool, string) {
				ok, why := n.Ready()
				if !ok {
					return false, strings.Join(why, "; ")
				}
				require.True(t, n.Cluster().MetadataCurrent())
				require.Equal(t, want, topicNames(c, x), "ready: every topic listed")
				return true, ""
			})
		}
	})
}

// TestNodeBrokerIsProcess pins config.go's validation and the embedded
// cluster's hand operations that cluster mode refuses
// (docs/phase-7-processes.md § What is left out): Open refuses a configuration it
// cannot start with ErrInvalidConfig; through a node, a broker is stopped
// and started as its process, never through its Cluster
// (cluster.ErrBrokerIsProcess), and nothing changes.
func TestNodeBrokerIsProcess(t *testing.T) {
	for _, cfg := range []clusternode.Config{
		{ID: 0, Peers: map[int]string{0: "127.0.0.1:1"}, DataDir: t.TempDir()},
		{ID: 1, Peers: map[int]string{2: "127.0.0.1:1"}, DataDir: t.TempDir()},
		{ID: 1, Peers: map[int]string{1: "127.0.0.1:1"}},
		{ID: 1, Peers: map[int]string{1: "127.0.0.1:1"}, DataDir: t.TempDir(), KafkaAddr: "127.0.0.1:0"},
	} {
		_, err := clusternode.Open(cfg)
		require.ErrorIs(t, err, clusternode.ErrInvalidConfig, "%+v", cfg)
	}
	synctest.Test(t, func(t *testing.T) {
		c := start(t, 3, clustertest.Options{})
		every := func() (bool, string) {
			for _, id := range c.IDs() {
				for _, b := range c.Via(id).Brokers() {
					if !b.Available {
						return false, fmt.Sprintf("through node %d: %+v", id, b)
					}
				}
			}
			return true, ""
		}
		c.Await("every broker available through every node", every)
		require.ErrorIs(t, c.Via(1).StopBroker(2), cluster.ErrBrokerIsProcess)
		require.ErrorIs(t, c.Via(1).StopBroker(1), cluster.ErrBrokerIsProcess)
		_, err := c.Via(2).StartBroker(3)
		require.ErrorIs(t, err, cluster.ErrBrokerIsProcess)
		time.Sleep(clustertest.DefaultFailoverAfter) // heartbeats are all a node knows of the others: they go on
		ok, why := every()
		require.True(t, ok, "a refused stop stopped nothing: %s", why)
	})
}

// TestNodeCloseEndsProposals pins errors.go's ErrClosed ("returned after
// Close"): a metadata change asked of a node after it closed, or still in
// flight when it closes, fails at once as closed rather than waiting for
// a metadata leader the closed node can no longer find.
func TestNodeCloseEndsProposals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := start(t, 3, clustertest.Options{})
		x := others(c, c.Controller())[0]
		n := c.Node(x)
		c.Stop(x)
		began := time.Now()
		_, err := n.SetAutomaticHealing(context.Background(), false, "after close")
		require.Error(t, err)
		require.True(t, errors.Is(err, clusternode.ErrClosed) || errors.Is(err, cluster.ErrClosed), "closed, not %v", err)
		require.Less(t, time.Since(began), time.Second, "refused at once")
	})
}
