package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// This file sends an operation to the process that must run it. A
// catch-up, a recovery and a leader move pause the partition's writes,
// which only the process hosting its leader can do; a failover needs to
// know which brokers are up, which the controller's process knows first
// hand. In one process every broker is hosted and the controller is
// local, so nothing here ever leaves it.

// Operate runs an operation that broker to's process, this one, must run
// (what Transport.Operate carries). It does not send it on: if the
// partition's leader (or the controller) moved meanwhile, the answer is a
// *NotLeaderError (ErrNotController) and the sender asks again.
func (c *Cluster) Operate(ctx context.Context, to int, req OperateRequest) (OperateResponse, error) {
	if !c.hosts(to) {
		return OperateResponse{}, fmt.Errorf("cluster: broker %d does not run in this process: %w", to, ErrBrokerUnavailable)
	}
	by := req.By
	if by == "" {
		by = ByOperator
	}
	cs := cause{by: by, reason: req.Reason, forwarded: true, ctx: ctx}
	var (
		v   any
		err error
	)
	switch req.Op {
	case OperateCatchUp:
		v, err = c.catchUp(req.Topic, req.Partition, req.Broker, cs, req.Epoch)
	case OperateRecover:
		v, err = c.recoverReplica(req.Topic, req.Partition, req.Broker, cs, req.Epoch)
	case OperateMoveLeader:
		v, err = c.moveLeader(req.Topic, req.Partition, req.Broker, cs, req.Epoch)
	case OperateFailover:
		v, err = c.failover(req.Topic, req.Partition, cs, req.Epoch)
	case OperateLogStart:
		v, err = c.advanceLogStart(req.Topic, req.Partition, req.Offset, cs)
	case OperateReopen:
		v, err = c.reopenHosted(to)
	case OperateStatus:
		v, err = c.Status(req.Topic, req.Partition)
	case OperateVersion:
		v = struct{}{}
	default:
		return OperateResponse{}, fmt.Errorf("cluster: operation %q: %w", req.Op, ErrInvalidArgument)
	}
	if err != nil {
		return OperateResponse{}, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return OperateResponse{}, fmt.Errorf("cluster: operation %q: %w", req.Op, err)
	}
	return OperateResponse{Result: data, Version: c.store.Version()}, nil
}

// operateOn runs req on broker to's process and decodes its result.
func operateOn[T any](c *Cluster, to int, req OperateRequest, cs cause) (T, error) {
	var out T
	ctx, cancel := context.WithTimeout(cs.context(), c.requestTimeout+c.pushTimeout)
	defer cancel()
	res, err := c.transport.Operate(ctx, to, req)
	if err != nil {
		return out, err
	}
	if cs.journaled != nil {
		*cs.journaled = true
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		return out, fmt.Errorf("cluster: the answer to %s from broker %d: %w", req.Op, to, err)
	}
	// Done there; seen here before the caller is told, so that what it
	// asks of this process next (a write after a failover) sees it.
	if err := c.store.AwaitVersion(ctx, res.Version); err != nil {
		c.logf("%s done by broker %d's process, not yet seen by this one's copy of the metadata: %v", req.Op, to, err)
	}
	return out, nil
}

// leaderElsewhere reports whether p's leader runs in another process, and
// which broker it is; an operation sent here by another process must not
// be sent on (a *NotLeaderError then).
func (c *Cluster) leaderElsewhere(p *partition, cs cause) (int, bool, error) {
	pm, err := c.partitionMeta(p)
	if err != nil {
		return 0, false, err
	}
	if c.hosts(pm.Leader) {
		return 0, false, nil
	}
	if cs.forwarded {
		return 0, false, &NotLeaderError{Topic: p.topic, Partition: p.index, Broker: c.localID, Leader: pm.Leader}
	}
	return pm.Leader, true, nil
}

// controllerElsewhere reports whether the controller runs in another
// process, and on which broker's.
func (c *Cluster) controllerElsewhere(cs cause) (int, bool, error) {
	if c.observer == nil {
		return 0, false, nil
	}
	switch ctl := c.observer.Controller(); {
	case ctl == 0:
		return 0, false, ErrNoController
	case ctl == c.localID:
		return 0, false, nil
	case cs.forwarded:
		return 0, false, fmt.Errorf("cluster: broker %d's process does not run the controller, broker %d's does: %w", c.localID, ctl, ErrNoController)
	default:
		return ctl, true, nil
	}
}

// isJournalFailure reports whether err says an operation took effect but
// its journal entry could not be written.
func isJournalFailure(err error) bool { return errors.Is(err, ErrJournalFailed) }
