package cluster

import (
	"context"
	"fmt"
	"time"
)

// ApplyResult says what Apply did.
type ApplyResult struct {
	// Changed is false when the action found nothing to do: a catch-up
	// whose follower the write in flight had already brought level.
	Changed bool
	// Summary is what happened, in one line with its numbers.
	Summary string
	// Journaled is true when the operation wrote a journal entry (an
	// intent, an outcome): false for a refusal that changed nothing.
	Journaled bool
}

// Apply carries out one action of Plan through the operation of its kind
// (CatchUp, Deactivate, Failover, RecoverReplica, MoveLeader), journaled as
// the controller's with the action's reason. The action's leader epoch must
// still be the partition's: an action planned before a leader change is
// refused with ErrStaleAction and changes nothing. Every other refusal is
// the operation's own.
//
// In cluster mode an action that waits on other brokers — a catch-up, a
// recovery or a leader move waits on the partition's leader and the
// replica acted on — ends as soon as one of them stops reporting, rather
// than hold the controller's loop, and every failover behind it, until its
// requests time out.
func (c *Cluster) Apply(a Action) (ApplyResult, error) {
	var journaled bool
	ctx, cancel := c.whileUp(a)
	defer cancel()
	res, err := c.apply(a, cause{by: ByController, reason: a.Reason, journaled: &journaled, ctx: ctx})
	res.Journaled = journaled
	return res, err
}

// whileUpEvery is how often whileUp looks at the brokers it watches.
const whileUpEvery = 100 * time.Millisecond

// whileUp is a context that ends when a broker action a waits on stops
// reporting: the partition's leader and the broker acted on, for the
// actions that wait on them. In one process it never ends early.
func (c *Cluster) whileUp(a Action) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	if c.observer == nil || a.Kind == ActionFailover || a.Kind == ActionDeactivate {
		return ctx, cancel
	}
	pm, err := readPartition(c.store, a.Topic, a.Partition)
	if err != nil {
		return ctx, cancel
	}
	ids := []int{pm.Leader, a.Broker}
	go func() {
		t := time.NewTicker(whileUpEvery)
		defer t.Stop()
		for {
			for _, id := range ids {
				if !c.hosts(id) && !c.observer.Broker(id).Available {
					cancel()
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ctx, cancel
}

// apply is Apply on behalf of cs.
func (c *Cluster) apply(a Action, cs cause) (ApplyResult, error) {
	epoch := &a.LeaderEpoch
	switch a.Kind {
	case ActionCatchUp:
		res, err := c.catchUp(a.Topic, a.Partition, a.Broker, cs, epoch)
		return ApplyResult{Changed: res.Copied > 0, Summary: fmt.Sprintf("follower %d copied %d records, log end %d", a.Broker, res.Copied, res.LogEnd)}, err
	case ActionDeactivate:
		res, err := c.deactivate(a.Topic, a.Partition, a.Broker, cs, epoch)
		return ApplyResult{Changed: err == nil, Summary: fmt.Sprintf("follower %d left the active set, now %v", a.Broker, res.Active)}, err
	case ActionFailover:
		res, err := c.failover(a.Topic, a.Partition, cs, epoch)
		return ApplyResult{Changed: err == nil, Summary: fmt.Sprintf("leader %d -> %d (epoch %d), log end %d", res.OldLeaderBrokerID, res.NewLeaderBrokerID, res.LeaderEpoch, res.LogEndOffset)}, err
	case ActionRecover:
		res, err := c.recoverReplica(a.Topic, a.Partition, a.Broker, cs, epoch)
		return ApplyResult{Changed: err == nil, Summary: fmt.Sprintf("broker %d recovered: %d records cut, %d copied, active %v", a.Broker, res.Dropped, res.Copied, res.Active)}, err
	case ActionMoveLeader:
		res, err := c.moveLeader(a.Topic, a.Partition, a.Broker, cs, epoch)
		return ApplyResult{Changed: err == nil, Summary: fmt.Sprintf("leader %d -> %d (epoch %d)", res.OldLeaderBrokerID, res.NewLeaderBrokerID, res.LeaderEpoch)}, err
	}
	return ApplyResult{}, fmt.Errorf("cluster: apply %q: unknown action: %w", a.Kind, ErrInvalidArgument)
}
