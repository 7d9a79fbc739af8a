package controller

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/logtest"
)

// divergingCluster is one partition, leader 1, whose follower 3 reports
// itself diverged whatever is done to it, as a follower kept diverging by
// requests that should not reach it. Apply flips the follower out of and
// into the active set; every change and refusal is a journal entry.
type divergingCluster struct {
	active3  bool
	journal  []string
	refusals []error
}

func (d *divergingCluster) Brokers() []cluster.BrokerInfo {
	return []cluster.BrokerInfo{{ID: 1, Available: true}, {ID: 2, Available: true}, {ID: 3, Available: true}}
}

func (d *divergingCluster) Topics() []cluster.TopicInfo {
	return []cluster.TopicInfo{{Name: "t", PartitionCount: 1, ReplicationFactor: 3}}
}

func (d *divergingCluster) Observe(string, int) (cluster.PartitionStatus, error) {
	end := uint64(10)
	return cluster.PartitionStatus{Topic: "t", Partition: 0, Leader: 1, LeaderEpoch: 4, Preferred: 1, Replicas: []cluster.ReplicaStatus{
		{BrokerID: 1, Active: true, Available: true, LogEnd: &end},
		{BrokerID: 2, Active: true, Available: true, LogEnd: &end},
		{BrokerID: 3, Active: d.active3, Available: true, LogEnd: &end, Err: fmt.Errorf("broker 3: %w", cluster.ErrReplicaDivergence)},
	}}, nil
}

func (d *divergingCluster) Apply(a cluster.Action) (cluster.ApplyResult, error) {
	switch a.Kind {
	case cluster.ActionDeactivate:
		d.active3 = false
	case cluster.ActionRecover:
		d.active3 = true
	default:
		return cluster.ApplyResult{}, errors.New("unexpected action " + a.String())
	}
	d.journal = append(d.journal, a.String())
	return cluster.ApplyResult{Changed: true, Journaled: true, Summary: a.String()}, nil
}

func (d *divergingCluster) JournalRefusal(a cluster.Action, refusal error) error {
	d.journal = append(d.journal, "refused "+a.String())
	d.refusals = append(d.refusals, refusal)
	return nil
}

// A follower that diverges again at once after each recovery is not
// flipped out of and into the active set on every pass (twenty times a
// second at the default interval, each flip journaled): its recoveries
// back off, doubling from max(FailoverAfter, 1 s), and the hold is
// journaled once, saying why. Over a simulated minute of passes the
// journal takes a handful of entries, not a thousand.
func TestControllerDivergedFollowerBacksOff(t *testing.T) {
	d := &divergingCluster{active3: true}
	k, err := New(d, Config{FailoverAfter: time.Second})
	require.NoError(t, err)
	clk := logtest.NewClock(time.Unix(1_000_000, 0))
	k.now = clk.Now
	for range int(time.Minute / DefaultInterval) {
		_, err := k.Step()
		require.NoError(t, err)
		clk.Advance(DefaultInterval)
	}
	require.LessOrEqual(t, len(d.journal), 20, "journal entries over a minute: %v", d.journal)
	require.GreaterOrEqual(t, len(d.journal), 4, "the follower is still deactivated and recovered now and then")
	require.Len(t, d.refusals, 1, "the hold is journaled once")
	var held *RecoveryHeldError
	require.ErrorAs(t, d.refusals[0], &held)
	require.ErrorIs(t, d.refusals[0], ErrRecoveryHeld)
	require.Equal(t, 3, held.Broker)
	require.Equal(t, time.Second, held.Wait)
}

// RecoveryBackoff doubles from max(FailoverAfter, 1 s) up to
// MaxRecoveryBackoff.
func TestControllerRecoveryBackoff(t *testing.T) {
	require.Equal(t, time.Second, RecoveryBackoff(1, 0))
	require.Equal(t, 3*time.Second, RecoveryBackoff(1, 3*time.Second))
	require.Equal(t, 8*time.Second, RecoveryBackoff(4, time.Second))
	require.Equal(t, MaxRecoveryBackoff, RecoveryBackoff(40, time.Second))
}
