package backend

import (
	"context"
	"fmt"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/controller"
	"github.com/pystream/pystream/topic"
)

// Local is the embedded cluster of logical brokers (phases 4 and 5) as a
// backend: Data, TopicAdmin and Operator, every method the cluster's own
// except the few adapted here. It has no Membership. Safe for concurrent
// use once built; set Controller before serving.
type Local struct {
	*cluster.Cluster
	// Controller is the loop that keeps the cluster serving; nil runs
	// none: Wake and ForgetTopic do nothing, Ready is true, and automatic
	// healing cannot be switched.
	Controller *controller.Controller
	// FailoverAfter is the configured failover delay
	// (PYSTREAM_FAILOVER_AFTER; 0 is the manual mode), and
	// DefaultFailoverAfter the delay healing switched on takes when that
	// is 0.
	FailoverAfter, DefaultFailoverAfter time.Duration
}

var (
	_ Data       = (*Local)(nil)
	_ TopicAdmin = (*Local)(nil)
	_ Storage    = (*Local)(nil)
	_ Operator   = (*Local)(nil)
)

// Send writes through a cluster.Producer.
func (l *Local) Send(topicName string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error) {
	p := cluster.NewProducer(l.Cluster, topicName)
	switch {
	case partition != nil:
		return p.SendBatchTo(*partition, msgs)
	case len(msgs) == 1:
		res, err := p.Send(msgs[0].Key, msgs[0].Payload)
		return []cluster.SendResult{res}, err
	default:
		return p.SendBatch(msgs)
	}
}

// SendQueued queues through a cluster.Producer.
func (l *Local) SendQueued(topicName string, partition int, msgs []topic.Message) cluster.Queued {
	return cluster.NewProducer(l.Cluster, topicName).SendBatchToQueued(partition, msgs)
}

// StartBroker starts broker id (cluster.Cluster.StartBroker).
func (l *Local) StartBroker(id int) error {
	_, err := l.Cluster.StartBroker(id)
	return err
}

// Wake wakes the controller.
func (l *Local) Wake() {
	if l.Controller != nil {
		l.Controller.Wake()
	}
}

// Ready is the controller's readiness.
func (l *Local) Ready() (bool, []string) {
	if l.Controller == nil {
		return true, nil
	}
	return l.Controller.Ready()
}

// ForgetTopic has the controller forget a deleted topic.
func (l *Local) ForgetTopic(name string) {
	if l.Controller != nil {
		l.Controller.ForgetTopic(name)
	}
}

// AutomaticHealing is the controller's failover delay: on when above
// zero, switchable while a controller runs.
func (l *Local) AutomaticHealing() (on bool, failoverAfter time.Duration, switchable bool) {
	if l.Controller == nil {
		return l.FailoverAfter > 0, l.FailoverAfter, false
	}
	d := l.Controller.FailoverAfter()
	return d > 0, d, true
}

// SetAutomaticHealing turns the controller's healing off (the manual
// mode: it changes no metadata) or on again, after FailoverAfter — or,
// when that is 0, after DefaultFailoverAfter. The change is journaled
// first (a change the journal cannot record is not made) and lasts until
// the server stops.
func (l *Local) SetAutomaticHealing(_ context.Context, on bool, reason string) (bool, error) {
	if l.Controller == nil {
		return false, ErrNoHealingSwitch
	}
	delay, summary := time.Duration(0), "the controller changes no metadata (PYSTREAM_FAILOVER_AFTER's manual mode): "+
		"failover, shrinking the active set, recovery and leader moves are the operator's"
	if on {
		delay = l.FailoverAfter
		if delay <= 0 {
			delay = l.DefaultFailoverAfter
		}
		summary = fmt.Sprintf("the controller fails over, shrinks active sets and recovers after %s", delay)
	}
	if l.Controller.FailoverAfter() == delay {
		return false, nil // already so: nothing to journal
	}
	if _, err := l.JournalHealing(on, summary, reason); err != nil {
		return false, fmt.Errorf("journal the change of automatic healing: %w", err)
	}
	if err := l.Controller.SetFailoverAfter(delay); err != nil {
		return false, err
	}
	return true, nil
}
