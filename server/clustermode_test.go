package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// topicTruth is what node r answers for topic: its status with each
// replica's report time left out (the report times are checked apart),
// or the error.
func topicTruth(r *running, topic string) (*apiclient.TopicDetail, error) {
	d, err := r.client.Topic(context.Background(), topic)
	if err != nil {
		return nil, err
	}
	for i := range d.Partitions {
		for j := range d.Partitions[i].Replicas {
			d.Partitions[i].Replicas[j].ReportedAt = nil
		}
	}
	return d, nil
}

// settledTruth reports whether every running node answers the same
// status of topic's partitions: every replica available, active, at the
// same log end, lag 0, the high watermark at logEnd.
func (c *syncNodes) settledTruth(topic string, logEnd uint64) (bool, string) {
	var first *apiclient.TopicDetail
	for id, r := range c.nodes {
		d, err := topicTruth(r, topic)
		if err != nil {
			return false, fmt.Sprintf("node %d: %v", id, err)
		}
		for _, p := range d.Partitions {
			if p.HighWatermark != logEnd {
				return false, fmt.Sprintf("node %d: %s/%d high watermark %d", id, topic, p.Partition, p.HighWatermark)
			}
			for _, rs := range p.Replicas {
				if !rs.Available || !rs.Active || rs.LogEnd == nil || *rs.LogEnd != logEnd || rs.Lag == nil || *rs.Lag != 0 {
					b, _ := json.Marshal(rs)
					return false, fmt.Sprintf("node %d: %s/%d: %s", id, topic, p.Partition, b)
				}
			}
		}
		if first == nil {
			first = d
		} else if !reflect.DeepEqual(first, d) {
			return false, fmt.Sprintf("node %d answers otherwise: %+v against %+v", id, d, first)
		}
	}
	return true, ""
}

// docs/phase-7-processes.md § One truth from every node: on a cluster of
// three nodes, every node answers the same topic status — every replica
// available, active, lag 0, at the same log end — with the time each
// follower was last reported (the leader is asked as of now), and the same /api/cluster; a topic is failed
// over, has its leader moved and is deleted through nodes that are not
// the controller, and every node tells the outcome.
func TestClusterModeOneTruth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 3)
		for id := 1; id <= 3; id++ {
			c.start(id, nil, false, manual)
		}
		res := c.awaitNodes(c.nodes[1], "a controller and three registered nodes", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller != 0 && len(res.Nodes) == 3
		})
		controller := res.Controller
		others := slices.DeleteFunc([]int{1, 2, 3}, func(id int) bool { return id == controller })

		_, _, err := c.nodes[others[0]].client.CreateTopic(ctx, "orders", 1, 3)
		require.NoError(t, err)
		c.awaitReady()
		_, err = c.nodes[others[1]].client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}})
		require.NoError(t, err)
		c.await("every node tells the same settled status", func() (bool, string) { return c.settledTruth("orders", 3) })
		for id, r := range c.nodes {
			d, err := r.client.Topic(ctx, "orders")
			require.NoError(t, err)
			for _, rs := range d.Partitions[0].Replicas {
				if rs.BrokerID == d.Partitions[0].Leader {
					require.Nil(t, rs.ReportedAt, "node %d: the leader is asked as of now", id)
					continue
				}
				require.NotNil(t, rs.ReportedAt, "node %d: broker %d's report time", id, rs.BrokerID)
				require.False(t, rs.ReportedAt.After(time.Now()), "node %d: reported in the past", id)
				require.Less(t, time.Since(*rs.ReportedAt), 5*time.Second, "node %d: broker %d's report is recent", id, rs.BrokerID)
			}
		}
		var cl *apiclient.ClusterResponse
		for id, r := range c.nodes {
			got, err := r.client.Cluster(ctx)
			require.NoError(t, err)
			if cl == nil {
				cl = got
				continue
			}
			require.Equal(t, cl, got, "node %d's /api/cluster", id)
		}
		require.Len(t, cl.Brokers, 3)
		for _, b := range cl.Brokers {
			require.True(t, b.Available, "broker %d", b.ID)
		}

		// A leader move through a node that is not the controller.
		st, err := c.nodes[others[0]].client.Topic(ctx, "orders")
		require.NoError(t, err)
		p := st.Partitions[0]
		target := p.Followers[0]
		moved, err := c.nodes[others[0]].client.MoveLeader(ctx, "orders", 0, target)
		require.NoError(t, err)
		require.Equal(t, target, moved.NewLeader)
		c.await("every node tells the new leader", func() (bool, string) {
			for id, r := range c.nodes {
				d, err := r.client.Topic(ctx, "orders")
				if err != nil || d.Partitions[0].Leader != target {
					return false, fmt.Sprintf("node %d: %+v %v", id, d, err)
				}
			}
			return true, ""
		})

		// A failover through a node that is not the controller, after the
		// leader's node stopped (manual mode: nobody else fails it over).
		via := others[1]
		if via == target {
			via = others[0]
		}
		c.stop(target)
		// A write meanwhile is refused naming the leader that is gone.
		_, err = c.nodes[via].client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("lost")}})
		var down *apiclient.Error
		require.ErrorAs(t, err, &down)
		require.Equal(t, http.StatusServiceUnavailable, down.Status, err)
		require.Equal(t, []int{target}, down.BrokerIDs, err)
		// Until the heartbeats show its node gone, the leader counts as
		// available and the failover is refused (409); while the stopped
		// node led the metadata group, there is no controller to take it
		// until the others elect one (503).
		c.await("the failover taken", func() (bool, string) {
			_, err := c.nodes[via].client.Failover(ctx, "orders", 0)
			if err != nil {
				var e *apiclient.Error
				require.ErrorAs(t, err, &e)
				require.Contains(t, []int{http.StatusConflict, http.StatusServiceUnavailable}, e.Status, err)
				return false, err.Error()
			}
			return true, ""
		})
		// The node that took the failover has applied it when it answers:
		// a write through it goes to the new leader at once.
		_, err = c.nodes[via].client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("d")}})
		require.NoError(t, err)
		c.await("every running node tells the failover", func() (bool, string) {
			for id, r := range c.nodes {
				d, err := r.client.Topic(ctx, "orders")
				if err != nil || d.Partitions[0].Leader == target || d.Partitions[0].LeaderEpoch != 2 {
					return false, fmt.Sprintf("node %d: %+v %v", id, d, err)
				}
			}
			return true, ""
		})
		c.start(target, nil, false, manual)
		c.awaitReady()
		rec, err := c.nodes[via].client.Recover(ctx, "orders", 0, target)
		require.NoError(t, err)
		require.Equal(t, uint64(3), rec.CommonPrefix)
		require.Equal(t, uint64(1), rec.Copied, "the record written while its node was down")
		c.await("the restarted node shown settled from every node", func() (bool, string) { return c.settledTruth("orders", 4) })

		// A delete through a node that is not the controller, while a
		// node that holds replicas is down: the topic is gone at once from
		// every node that runs, and its name is kept until the node that
		// was down has removed its files too.
		res, err = c.nodes[1].client.ClusterNodes(ctx)
		require.NoError(t, err)
		rest := slices.DeleteFunc([]int{1, 2, 3}, func(id int) bool { return id == res.Controller })
		del, away := rest[0], rest[1]
		c.stop(away)
		_, err = c.nodes[del].client.DeleteTopic(ctx, "orders")
		require.NoError(t, err)
		c.await("every running node tells the topic gone", func() (bool, string) {
			for id, r := range c.nodes {
				status, body := r.raw(t, http.MethodGet, "/api/topics/orders", "")
				if status != http.StatusNotFound || !strings.Contains(body, `"code":"not_found"`) {
					return false, fmt.Sprintf("node %d: %d %s", id, status, body)
				}
			}
			return true, ""
		})
		_, _, err = c.nodes[del].client.CreateTopic(ctx, "orders", 1, 3)
		var pending *apiclient.Error
		require.ErrorAs(t, err, &pending)
		require.Equal(t, http.StatusConflict, pending.Status, err)
		require.Equal(t, []int{away}, pending.BrokerIDs, "the node that has yet to remove its files: %v", err)
		c.start(away, nil, false, manual)
		c.await("the name free again once the node removed its files", func() (bool, string) {
			_, _, err := c.nodes[del].client.CreateTopic(ctx, "orders", 1, 3)
			return err == nil, fmt.Sprint(err)
		})
		c.awaitReady()
		d, err := c.nodes[away].client.Topic(ctx, "orders")
		require.NoError(t, err)
		require.Zero(t, d.Partitions[0].HighWatermark, "created again, it starts empty")
	})
}

// docs/phase-7-processes.md § Nothing answered before it is known: a node
// restarted under load answers every request that depends on the
// cluster's metadata either as it will once it is current — the topic,
// its records, the consumer's offsets — or 503 not_ready with
// Retry-After; never 404 for a topic that exists, never an empty list of
// offsets a consumer committed.
func TestClusterModeRestartAnswersNotReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c := newSyncNodes(t, 3)
		for id := 1; id <= 3; id++ {
			c.start(id, nil, false)
		}
		c.awaitNodes(c.nodes[1], "three registered nodes", func(res *apiclient.ClusterNodesResponse) bool {
			return res.Controller != 0 && len(res.Nodes) == 3
		})
		_, _, err := c.nodes[1].client.CreateTopic(ctx, "orders", 1, 3)
		require.NoError(t, err)
		c.awaitReady()
		recs := []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}}
		_, err = c.nodes[1].client.Produce(ctx, "orders", recs)
		require.NoError(t, err)
		_, err = c.nodes[1].client.CommitOffset(ctx, "billing", "orders", 0, 2)
		require.NoError(t, err)
		restarted := 3
		if res, err := c.nodes[1].client.ClusterNodes(ctx); err == nil && res.Controller == restarted {
			restarted = 2 // a node that does not lead: the others keep their controller
		}
		writer := 1 + restarted%3
		c.stop(restarted)

		// The load: a producer through another node, all along (its
		// client taken now: c.start writes c.nodes meanwhile).
		stop := make(chan struct{})
		wrote := make(chan int)
		wc := c.nodes[writer].client
		go func() {
			n := 0
			defer func() { wrote <- n }()
			for range 10_000 {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := wc.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("load")}}); err == nil {
					n++
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()

		r := c.start(restarted, nil, false)
		notReady := 0
		for answered := false; !answered; {
			answered = true
			for _, target := range []string{"/api/topics/orders", "/api/topics/orders/partitions/0/records?offset=0&max=3",
				"/api/consumers/billing/offsets", "/api/topics"} {
				status, body := r.raw(t, http.MethodGet, target, "")
				if status == http.StatusServiceUnavailable {
					require.Contains(t, body, `"code":"not_ready"`, "%s: %s", target, body)
					notReady++
					answered = false
					continue
				}
				require.Equal(t, http.StatusOK, status, "%s: %s", target, body)
				switch {
				case strings.HasPrefix(target, "/api/topics/orders/partitions"):
					var f apiclient.FetchResponse
					require.NoError(t, json.Unmarshal([]byte(body), &f))
					require.Len(t, f.Records, 3, body)
				case strings.HasPrefix(target, "/api/consumers"):
					var o apiclient.ConsumerOffsetsResponse
					require.NoError(t, json.Unmarshal([]byte(body), &o))
					require.Len(t, o.Offsets, 1, "the committed offset, never an empty list: %s", body)
				case target == "/api/topics":
					require.Contains(t, body, `"orders"`)
				}
			}
			if !answered {
				time.Sleep(50 * time.Millisecond) // the bubble's clock: Retry-After, shortened
			}
		}
		require.Positive(t, notReady, "the node answered not_ready before its metadata was current")
		close(stop)
		require.Positive(t, <-wrote, "writes went on through another node")
	})
}
