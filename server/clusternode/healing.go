package clusternode

import (
	"context"
	"fmt"
	"time"

	"github.com/pystream/pystream/cluster"
)

// This file is automatic healing switched at run time in cluster mode. The
// switch is a fact of the replicated metadata (cluster.MetaState.Healing,
// changed by the set-healing command through Raft), so it survives a
// change of leader and a restart of every node. Every node's controller
// follows it as its copy of the metadata applies it; only the leader's
// runs. Off, the controller changes no metadata, as with FailoverAfter 0;
// on, it acts after this node's FailoverAfter, or DefaultFailoverAfter
// when that is 0; never switched, FailoverAfter alone decides. The
// heartbeats and the failure detector keep FailoverAfter's timing
// whichever way it is switched: switching it off stops no heartbeat.

// fallbackFailoverAfter is the delay switching healing on uses when
// neither FailoverAfter nor DefaultFailoverAfter is set.
const fallbackFailoverAfter = 3 * time.Second

// healingDelay is the failover delay the replicated switch gives this
// node's controller: zero is manual mode.
func (n *Node) healingDelay() time.Duration {
	var switched *bool
	n.fsm.read(func(s *cluster.MetaState) {
		if s.Healing != nil {
			on := *s.Healing
			switched = &on
		}
	})
	switch {
	case switched == nil:
		return n.cfg.FailoverAfter
	case !*switched:
		return 0
	case n.cfg.FailoverAfter > 0:
		return n.cfg.FailoverAfter
	case n.cfg.DefaultFailoverAfter > 0:
		return n.cfg.DefaultFailoverAfter
	default:
		return fallbackFailoverAfter
	}
}

// followHealing sets the controller's failover delay to the replicated
// switch's; the fsm calls it after every apply and restore.
func (n *Node) followHealing() {
	n.healMu.Lock()
	defer n.healMu.Unlock()
	d := n.healingDelay()
	if n.ctrl.FailoverAfter() == d {
		return
	}
	if err := n.ctrl.SetFailoverAfter(d); err != nil {
		n.log.Error("automatic healing not switched", "failover_after", d, "err", err)
		return
	}
	n.log.Info("automatic healing follows the cluster's metadata", "automatic", d > 0, "failover_after", d)
}

// AutomaticHealing reports whether automatic healing is on as this node's
// copy of the metadata has it, and the failover delay its controller acts
// after (zero when off).
func (n *Node) AutomaticHealing() (on bool, after time.Duration) {
	d := n.healingDelay()
	return d > 0, d
}

// SetAutomaticHealing switches automatic healing on or off for the whole
// cluster through Raft (the set-healing command, journaled as the
// operator's healing entry with reason), from any node: a proposal on a
// node that does not lead the metadata group is forwarded to the one that
// does, as every metadata change is. It is always proposed, even when
// this node's copy already says so: that copy may be behind, the
// metadata group may have no leader (an error, not a switch that did not
// happen), and an "off" never switched before is recorded, so that no
// node's PYSTREAM_FAILOVER_AFTER turns healing on after a restart. The
// state machine decides whether it changed: switched to what it is
// already, it changes and journals nothing, and changed is false. It
// returns once this node's copy has applied the command.
func (n *Node) SetAutomaticHealing(ctx context.Context, on bool, reason string) (changed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	res, err := n.propose(ctx, cluster.MetaCommand{Op: cluster.OpSetHealing, By: cluster.ByOperator, Reason: reason, Automatic: &on})
	if err != nil {
		return false, fmt.Errorf("clusternode: switch automatic healing: %w", err)
	}
	return res.Journal != nil, nil
}
