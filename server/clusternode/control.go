package clusternode

import (
	"context"
	"time"

	"github.com/pystream/pystream/server/controller"
)

// This file runs the controller — phase 5's loop over the node's
// cluster.Cluster, the same as in one process — on the node that leads
// the metadata group, and stops it when the node no longer does.

// leadershipLoop runs the controller while this node leads the metadata
// group, and stops it when it no longer does; it tells
// Config.LeaderChanged of every change of leader it sees.
func (n *Node) leadershipLoop() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var run *controllerRun
	defer func() { run.stop() }()
	told := 0
	for {
		leading := n.raft.IsLeader()
		switch {
		case leading && run == nil:
			// The controller starts from every command committed before
			// this term, applied: an automatic healing switched off in
			// the log it has yet to apply, a failover already decided.
			// Not there yet, it tries again at the next tick.
			if err := n.barrier(); err != nil {
				n.log.Warn("this node leads the metadata group, but its copy is not caught up yet: the controller waits", "err", err)
				break
			}
			n.log.Info("this node leads the metadata group: the controller starts")
			run = startController(n.ctx, n.ctrl)
		case !leading && run != nil:
			n.log.Info("this node no longer leads the metadata group: the controller stops")
			run.stop()
			run = nil
		}
		if leader := n.leaderSeen(leading); leader != told && n.cfg.LeaderChanged != nil {
			told = leader
			n.cfg.LeaderChanged(leader)
		}
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Barrier waits until this node's copy of the metadata has applied every
// command committed before it, or ctx ends; only the leader of the
// metadata group can (raftmeta.Node.Barrier). The server's group
// coordinator reads the groups' saved leases after it.
func (n *Node) Barrier(ctx context.Context) error { return n.raft.Barrier(ctx) }

// barrier waits, for at most a few seconds, until this node's copy of
// the metadata has applied every command committed before it.
func (n *Node) barrier() error {
	ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
	defer cancel()
	return n.raft.Barrier(ctx)
}

// leaderSeen is the leader as the loop reports it: this node while it
// leads, else the leader Raft knows of, never this node (it has just
// stepped down), 0 when none is known.
func (n *Node) leaderSeen(leading bool) int {
	if leading {
		return n.cfg.ID
	}
	if id, _ := n.raft.Leader(); id != n.cfg.ID {
		return id
	}
	return 0
}

// controllerRun is one term of the controller's loop.
type controllerRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startController(parent context.Context, k *controller.Controller) *controllerRun {
	ctx, cancel := context.WithCancel(parent)
	r := &controllerRun{cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); k.Run(ctx) }()
	return r
}

// stop ends the term and waits for it; a nil run is stopped already.
func (r *controllerRun) stop() {
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
}

// Wake asks the controller for a pass now, when this node runs it.
func (n *Node) Wake() { n.ctrl.Wake() }

// ForgetTopic drops what the controller remembers of a deleted topic.
func (n *Node) ForgetTopic(name string) { n.ctrl.ForgetTopic(name) }

// Controller is the node that leads the metadata group (the controller)
// as this node knows it now; 0 when none is known.
func (n *Node) Controller() int {
	id, _ := n.raft.Leader()
	return id
}
