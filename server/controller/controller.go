package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/cluster"
)

// DefaultInterval is the time between two passes when Config.Interval is
// zero: short beside any sensible PYSTREAM_FAILOVER_AFTER, so that a
// failover starts at most this long after the delay has run out.
const DefaultInterval = 50 * time.Millisecond

// Config is a Controller's settings.
type Config struct {
	// FailoverAfter is how long a broker must stay unavailable before its
	// partitions fail over and its follower replicas leave the active set.
	// Zero: never; the controller then changes no metadata at all.
	FailoverAfter time.Duration
	// Rebalance moves leadership back to each partition's preferred replica
	// once it is active and caught up.
	Rebalance bool
	// Interval is the time between passes; zero means DefaultInterval.
	Interval time.Duration
	// Logger receives one line per action; nil discards them.
	Logger *slog.Logger
	// Registerer receives the controller's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Cluster is what a Controller observes and acts on: a *cluster.Cluster
// of logical brokers, or in cluster mode the metadata replicated through
// Raft, fed by the brokers' heartbeats (server/clusternode).
type Cluster interface {
	Brokers() []cluster.BrokerInfo
	Topics() []cluster.TopicInfo
	Observe(topicName string, partition int) (cluster.PartitionStatus, error)
	Apply(a cluster.Action) (cluster.ApplyResult, error)
	JournalRefusal(a cluster.Action, refusal error) error
}

var _ Cluster = (*cluster.Cluster)(nil)

// Controller runs cluster.Plan against one cluster and carries out its
// actions. It is safe for concurrent use; passes never overlap.
type Controller struct {
	cl      Cluster
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	// now is the clock (tests replace it).
	now func() time.Time

	// step serialises passes.
	step sync.Mutex
	// mu guards the fields below; never held across a cluster operation,
	// so Ready never waits for one.
	mu sync.Mutex
	// down records when each unavailable broker was first seen so.
	down map[int]time.Time
	// leaderLost records, per partition, when its leader was first seen
	// unavailable, to measure the time until it has a usable leader again
	// (a failover, by the controller or by hand, or the broker's return).
	leaderLost map[partKey]time.Time
	// diverged marks followers a catch-up found diverged from their leader.
	diverged map[replicaKey]bool
	// behind records each active follower seen behind its leader: at which
	// log end, since when, and on how many passes.
	behind map[replicaKey]lag
	// refused remembers the last refusal of each action, so that the same
	// refusal is logged and journaled once, and retried only after a while.
	refused map[actionKey]refusal
	// flaps remembers, per follower, its last recovery and how often in a
	// row it was found diverged again soon after one: its next recovery
	// waits (recoveryHeld).
	flaps map[replicaKey]flap
	// replicas remembers, per replica, the metadata it was last seen with
	// and when the controller last decided about it: a report older than
	// that is stale (cluster.PlanReplica.Stale).
	replicas map[replicaKey]replicaMemo
	// failoverAfter is Config.FailoverAfter until SetFailoverAfter
	// changes it at run time; zero is manual mode.
	failoverAfter time.Duration
	// passes counts completed passes.
	passes int
	// notReady holds the reasons of the last pass; ready needs passes > 0.
	notReady []string

	wake chan struct{}
}

type partKey struct {
	topic     string
	partition int
}

type replicaKey struct {
	partKey
	broker int
}

// lag is a follower seen behind its leader at log end end since since, on
// passes passes.
type lag struct {
	end    uint64
	since  time.Time
	passes int
}

// replicaMemo is what the controller remembers of one replica: the
// leader epoch and active flag it last saw it with, and when (on the
// controller's clock) it last decided about it — acted on it, first saw it
// behind its leader at a log end and chose to wait, or saw its metadata
// change (a new epoch, the active set, a replica new to it). Only a report
// that reached the controller after decided is decided on.
type replicaMemo struct {
	epoch   uint64
	active  bool
	decided time.Time
}

// actionKey names an action up to its reason: the same kind on the same
// replica at the same leader epoch.
type actionKey struct {
	kind cluster.ActionKind
	replicaKey
	epoch uint64
}

// flap is a follower's recovery history: when it was last recovered, how
// many times in a row it was deactivated as diverged within FlapWindow of
// a recovery, and when it may be recovered again.
type flap struct {
	recovered time.Time
	count     int
	retryAt   time.Time
}

// FlapWindow is how soon after its recovery a follower deactivated as
// diverged counts as flapping: its recoveries then back off
// (RecoveryBackoff).
const FlapWindow = time.Minute

// MaxRecoveryBackoff caps the wait before a flapping follower's next
// recovery.
const MaxRecoveryBackoff = 5 * time.Minute

// RecoveryBackoff is the wait before the next recovery of a follower found
// diverged again after its recovery count times in a row, with failover
// delay failoverAfter: max(failoverAfter, 1 s), doubling with each flap,
// up to MaxRecoveryBackoff. A follower that keeps diverging — its broker's
// disk, or requests that should not reach it — is then deactivated and
// recovered a few times a quarter of an hour, not several times a second.
func RecoveryBackoff(count int, failoverAfter time.Duration) time.Duration {
	d := max(failoverAfter, time.Second)
	for i := 1; i < count && d < MaxRecoveryBackoff; i++ {
		d *= 2
	}
	return min(d, MaxRecoveryBackoff)
}

// EpochAheadRetry is the wait before an action is tried again that the
// replica's broker refused because its copy of the metadata has not
// reached the leader epoch the action was planned at yet
// (cluster.ErrEpochAhead): a node back from a cut replays its Raft log in
// moments, and its recovery should not wait the full back-off.
const EpochAheadRetry = 100 * time.Millisecond

// refusal is an action's last refusal and when it may be tried again.
type refusal struct {
	err     string
	retryAt time.Time
}

// New returns a controller for cl. It registers its metrics with
// cfg.Registerer, if any, and does nothing else until Step or Run.
func New(cl Cluster, cfg Config) (*Controller, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.FailoverAfter < 0 {
		return nil, fmt.Errorf("%w: %v", ErrNegativeDelay, cfg.FailoverAfter)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	k := &Controller{
		cl: cl, cfg: cfg, log: logger, now: time.Now,
		down: map[int]time.Time{}, leaderLost: map[partKey]time.Time{},
		diverged: map[replicaKey]bool{}, behind: map[replicaKey]lag{}, refused: map[actionKey]refusal{},
		flaps: map[replicaKey]flap{}, replicas: map[replicaKey]replicaMemo{},
		wake: make(chan struct{}, 1), failoverAfter: cfg.FailoverAfter,
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	k.metrics = m
	return k, nil
}

// Run makes a pass at once, then one every Config.Interval or as soon as
// Wake is called, until ctx is done. A quiet pass (nothing to do, every
// broker available, every partition ready: pass) is followed, when that
// is longer than Interval, by a rest of ten times its length for each
// processor its status readers keep busy (at most a second; Wake ends
// it), so that passes over many partitions take at most an eleventh of
// the CPU (passRest); any other pass is not. A pass that fails (the cluster
// closed under it) is logged and the next one tries again.
func (k *Controller) Run(ctx context.Context) {
	t := time.NewTicker(k.cfg.Interval)
	defer t.Stop()
	for {
		start := time.Now()
		_, quiet, err := k.pass()
		if err != nil && ctx.Err() == nil {
			k.log.Warn("controller pass failed", "err", err)
		}
		if rest := passRest(time.Since(start), passCores()); rest > k.cfg.Interval && quiet {
			r := time.NewTimer(rest)
			select {
			case <-ctx.Done():
				r.Stop()
				return
			case <-r.C:
			case <-k.wake:
				r.Stop()
			}
			t.Reset(k.cfg.Interval) // a tick of the rest is not a pass
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-k.wake:
		}
	}
}

// passShare is how many times its own length, for each processor it
// keeps busy, a quiet pass is rested after (when that is longer than
// Interval), so that passes take at most 1/(passShare+1) of the CPU: a pass reads every partition's status, so
// its cost grows with the partitions, and over a thousand of them a pass
// every Interval would take a share of the CPU that the writes need.
const passShare = 10

// maxPassRest caps the wait passRest adds, so that a pass slowed by a
// broker that does not answer does not delay the next by more than this.
const maxPassRest = time.Second

// passRest is how long Run rests after a quiet pass that took spent on
// cores processors at once: spent times passShare for each of them,
// capped at maxPassRest (Run rests only when that is longer than
// Interval). A pass's statuses are read side by side, so a pass of a
// given length costs that much CPU on each core it keeps busy.
func passRest(spent time.Duration, cores int) time.Duration {
	return min(passShare*spent*time.Duration(max(cores, 1)), maxPassRest)
}

// passCores is how many processors a pass keeps busy at most: its status
// readers run side by side, as many as Go runs on.
func passCores() int { return min(statusReaders, runtime.GOMAXPROCS(0)) }

// Wake asks Run for a pass now rather than at the next tick.
func (k *Controller) Wake() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// SetFailoverAfter changes Config.FailoverAfter at run time: zero turns
// automatic healing off (manual mode: the controller changes no metadata
// from its next pass on), a positive delay turns it on. A broker already
// unavailable counts from when the controller first saw it so, not from
// the change. The change lasts until the process ends (cluster mode
// keeps the switch in the cluster's metadata and sets it again here).
func (k *Controller) SetFailoverAfter(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: %v", ErrNegativeDelay, d)
	}
	k.mu.Lock()
	k.failoverAfter = d
	k.mu.Unlock()
	k.Wake()
	return nil
}

// FailoverAfter is the failover delay in force; zero is manual mode.
func (k *Controller) FailoverAfter() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.failoverAfter
}

// Ready reports whether every partition has an available leader and every
// replica log on an available broker is open, as of the last pass; when
// not, the reasons say why. Before the first pass has completed, the
// cluster is not ready.
func (k *Controller) Ready() (bool, []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.passes == 0 {
		return false, []string{"the controller has not completed its first pass: replica logs are being opened and checked"}
	}
	return len(k.notReady) == 0, append([]string(nil), k.notReady...)
}

// Outcome is one action a pass carried out and how it ended.
type Outcome struct {
	Action cluster.Action
	// Err is nil when the operation succeeded.
	Err error
}

// Step makes one pass: it observes the cluster, plans, carries out every
// action in order, and updates readiness. It returns what it did. An error
// means the cluster could not be observed (it is closed); a failed action is
// not an error of the pass, it is in its Outcome.
func (k *Controller) Step() ([]Outcome, error) {
	out, _, err := k.pass()
	return out, err
}

// pass is Step, and says whether the pass found the cluster quiet: no
// action but catch-ups of followers that trail a write in flight (moving),
// every broker available, every partition ready. Only after a
// quiet pass does Run rest (passRest): while a broker is unavailable the
// controller keeps its pace, so that the failover comes when it is due.
func (k *Controller) pass() (out []Outcome, quiet bool, _ error) {
	k.step.Lock()
	defer k.step.Unlock()
	in, err := k.observe()
	if err != nil {
		return nil, false, err
	}
	actions := cluster.Plan(in)
	k.mu.Lock()
	first := k.passes == 0
	k.mu.Unlock()
	out = k.actAll(in, actions, first)
	// A catch-up of a follower that trails a write in flight is passed
	// over (actAll): under writes to many partitions there is one almost
	// every pass, and the pass is quiet all the same.
	pending := slices.ContainsFunc(actions, func(a cluster.Action) bool { return !moving(in, a, first) })
	if len(out) > 0 {
		// Readiness and the gauges describe the cluster as the actions
		// left it.
		if in, err = k.observe(); err != nil {
			return out, false, err
		}
	}
	notReady := cluster.Readiness(in)
	k.mu.Lock()
	k.passes++
	k.notReady = notReady
	k.mu.Unlock()
	k.metrics.observePass(in, notReady)
	quiet = !pending && len(notReady) == 0 && !slices.ContainsFunc(in.Brokers, func(b cluster.PlanBroker) bool { return !b.Available })
	return out, quiet, nil
}

// statusReaders is how many partitions' statuses a pass reads at once,
// and how many partitions' actions it carries out at once.
const statusReaders = 8

// actAll carries out a pass's actions and returns what each did, in the
// plan's order. The actions of one partition run one after another, in
// the plan's order (a failover before the deactivations it planned with
// it); different partitions' run side by side, statusReaders at a time:
// a broker that led many partitions is replaced as its leader of all of
// them in about the time of one failover, not of one each.
func (k *Controller) actAll(in cluster.PlanInput, actions []cluster.Action, first bool) []Outcome {
	var order []partKey
	byPartition := map[partKey][]int{}
	for i, a := range actions {
		pk := partKey{a.Topic, a.Partition}
		if _, ok := byPartition[pk]; !ok {
			order = append(order, pk)
		}
		byPartition[pk] = append(byPartition[pk], i)
	}
	done := make([]*Outcome, len(actions))
	sem := make(chan struct{}, statusReaders)
	var wg sync.WaitGroup
	for _, pk := range order {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			for _, i := range byPartition[pk] {
				a := actions[i]
				if moving(in, a, first) {
					continue // the follower is moving: a write is in flight
				}
				if k.backingOff(a) || k.recoveryHeld(a) {
					continue // refused a moment ago, or recovered and diverged again: wait
				}
				err := k.act(a, divergedIn(in, a))
				k.decided(a)
				done[i] = &Outcome{Action: a, Err: err}
			}
		})
	}
	wg.Wait()
	var out []Outcome
	for _, o := range done {
		if o != nil {
			out = append(out, *o)
		}
	}
	return out
}

// statuses reads every partition's status, statusReaders at a time: in
// cluster mode a status asks the partition's leader, and a leader that
// is paused or cut off answers nothing for the status's whole wait; read
// one after another, its partitions' waits would add up and hold the
// pass — and the failovers it is about to decide — for as many waits.
// It returns the statuses in topic and partition order, and the topics
// deleted meanwhile.
func (k *Controller) statuses() ([]cluster.PartitionStatus, []string, error) {
	type slot struct {
		topic     string
		partition int
		st        cluster.PartitionStatus
		err       error
	}
	var slots []slot
	for _, t := range k.cl.Topics() {
		for p := range t.PartitionCount {
			slots = append(slots, slot{topic: t.Name, partition: p})
		}
	}
	sem := make(chan struct{}, statusReaders)
	var wg sync.WaitGroup
	for i := range slots {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			slots[i].st, slots[i].err = k.cl.Observe(slots[i].topic, slots[i].partition)
		})
	}
	wg.Wait()
	var statuses []cluster.PartitionStatus
	var gone []string
	for _, sl := range slots {
		switch {
		case errors.Is(sl.err, cluster.ErrUnknownTopic):
			if !slices.Contains(gone, sl.topic) {
				gone = append(gone, sl.topic) // deleted since Topics: nothing to plan
			}
		case sl.err != nil:
			return nil, nil, fmt.Errorf("controller: status of %s/%d: %w", sl.topic, sl.partition, sl.err)
		case !slices.Contains(gone, sl.topic):
			statuses = append(statuses, sl.st)
		}
	}
	return statuses, gone, nil
}

// observe builds the planner's input from the cluster's status and the
// controller's memory. It reads every status before it takes k.mu, so that
// Ready never waits behind an operation that holds a partition.
func (k *Controller) observe() (cluster.PlanInput, error) {
	brokers := k.cl.Brokers()
	statuses, gone, err := k.statuses()
	if err != nil {
		return cluster.PlanInput{}, err
	}
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	in := cluster.PlanInput{FailoverAfter: k.failoverAfter, Rebalance: k.cfg.Rebalance}
	for _, name := range gone {
		k.forgetTopicLocked(name)
	}
	for _, b := range brokers {
		pb := cluster.PlanBroker{ID: b.ID, Available: b.Available}
		if b.Available {
			delete(k.down, b.ID)
		} else {
			since, ok := k.down[b.ID]
			if !ok {
				since = now
				k.down[b.ID] = now
			}
			if !b.DownSince.IsZero() {
				since = b.DownSince // silent since its last heartbeat
			}
			pb.UnavailableFor = now.Sub(since)
		}
		in.Brokers = append(in.Brokers, pb)
	}
	seen := observed{behind: map[replicaKey]bool{}, replicas: map[replicaKey]bool{}}
	for _, st := range statuses {
		in.Partitions = append(in.Partitions, k.planPartitionLocked(st, now, seen))
	}
	for rk := range k.behind {
		if !seen.behind[rk] {
			delete(k.behind, rk) // level again, inactive, or its topic gone
		}
	}
	for rk := range k.replicas {
		if !seen.replicas[rk] {
			delete(k.replicas, rk) // unassigned, or its topic gone
		}
	}
	return in, nil
}

// ForgetTopic drops what the controller remembers of a topic's partitions
// (when a leader was lost, which followers diverged), so that a topic
// created again under the name starts afresh. Call it once the topic is
// deleted.
func (k *Controller) ForgetTopic(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forgetTopicLocked(name)
}

// forgetTopicLocked is ForgetTopic. k.mu must be held.
func (k *Controller) forgetTopicLocked(name string) {
	for pk := range k.leaderLost {
		if pk.topic == name {
			delete(k.leaderLost, pk)
		}
	}
	for rk := range k.diverged {
		if rk.topic == name {
			delete(k.diverged, rk)
		}
	}
	for rk := range k.behind {
		if rk.topic == name {
			delete(k.behind, rk)
		}
	}
	for key := range k.refused {
		if key.topic == name {
			delete(k.refused, key)
		}
	}
	for rk := range k.flaps {
		if rk.topic == name {
			delete(k.flaps, rk)
		}
	}
	for rk := range k.replicas {
		if rk.topic == name {
			delete(k.replicas, rk)
		}
	}
}

// observed collects the replicas one observation saw: all of them, and
// the active followers behind their leader.
type observed struct {
	behind   map[replicaKey]bool
	replicas map[replicaKey]bool
}

// decided notes that the controller has just decided about the replica
// action a names: reports that reached it before now tell of the replica
// before the action, and are not decided on again.
func (k *Controller) decided(a cluster.Action) {
	rk := replicaKey{partKey{a.Topic, a.Partition}, a.Broker}
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.replicas[rk]
	m.decided = k.now()
	k.replicas[rk] = m
}

// freshLocked updates what the controller remembers of replica rk, seen
// now with leader epoch epoch and active flag active, and reports whether
// a report that reached the controller at reportedAt (zero: read just
// now) is newer than its last decision about the replica. A replica new
// to the controller, or whose epoch or active flag changed, counts as
// decided about now — except on the first pass, which starts from what
// the replicas say. k.mu must be held.
func (k *Controller) freshLocked(rk replicaKey, epoch uint64, active bool, reportedAt, now time.Time) bool {
	m, known := k.replicas[rk]
	if (!known && k.passes > 0) || (known && (m.epoch != epoch || m.active != active)) {
		m.decided = now
	}
	m.epoch, m.active = epoch, active
	k.replicas[rk] = m
	return cluster.FreshReport(reportedAt, m.decided)
}

// planPartitionLocked converts one partition's status, adding what the
// controller remembers: which followers diverged, which replicas' reports
// are stale (older than its last decision about them), and for how long
// each active follower behind its leader has sat at its log end, counted
// on fresh reports only (seen records the replicas seen, and the ones
// behind now). It also times the partition's leader loss. k.mu must be
// held.
func (k *Controller) planPartitionLocked(st cluster.PartitionStatus, now time.Time, seen observed) cluster.PlanPartition {
	pk := partKey{st.Topic, st.Partition}
	pp := cluster.PlanPartition{Topic: st.Topic, Partition: st.Partition, Leader: st.Leader,
		LeaderEpoch: st.LeaderEpoch, Preferred: st.Preferred}
	var leaderEnd *uint64
	for _, r := range st.Replicas {
		if r.BrokerID == st.Leader && r.Available {
			leaderEnd = r.LogEnd
		}
	}
	if leaderEnd == nil {
		if _, ok := k.leaderLost[pk]; !ok {
			k.leaderLost[pk] = now
		}
	} else if since, ok := k.leaderLost[pk]; ok {
		k.metrics.leaderRecovery.Observe(now.Sub(since).Seconds())
		delete(k.leaderLost, pk)
	}
	for _, r := range st.Replicas {
		rk := replicaKey{pk, r.BrokerID}
		seen.replicas[rk] = true
		fresh := k.freshLocked(rk, st.LeaderEpoch, r.Active, r.ReportedAt, now)
		pr := cluster.PlanReplica{BrokerID: r.BrokerID, Active: r.Active, Available: r.Available, LogEnd: r.LogEnd,
			Diverged: k.diverged[rk] || errors.Is(r.Err, cluster.ErrReplicaDivergence), Stale: !fresh}
		if r.BrokerID != st.Leader && r.Active && leaderEnd != nil && r.LogEnd != nil && *r.LogEnd < *leaderEnd {
			l, ok := k.behind[rk]
			switch {
			case !fresh:
				// The report it was seen behind with, or an older one:
				// nothing new to count.
			case !ok || l.end != *r.LogEnd:
				// First seen behind at this log end: wait for the write in
				// flight, and decide on the next report.
				l = lag{end: *r.LogEnd, since: now, passes: 1}
				m := k.replicas[rk]
				m.decided = now
				k.replicas[rk] = m
			default:
				l.passes++
			}
			if ok || fresh {
				k.behind[rk] = l
				seen.behind[rk] = true
			}
			pr.Stuck, pr.StuckFor = l.passes > 1, now.Sub(l.since)
		}
		pp.Replicas = append(pp.Replicas, pr)
	}
	return pp
}

// divergedIn reports whether the replica action a names was seen diverged
// in the observation in.
func divergedIn(in cluster.PlanInput, a cluster.Action) bool {
	r, ok := actionReplica(in, a)
	return ok && r.Diverged
}

// actionReplica is the replica action a names, as the observation in saw
// it.
func actionReplica(in cluster.PlanInput, a cluster.Action) (cluster.PlanReplica, bool) {
	for _, p := range in.Partitions {
		if p.Topic != a.Topic || p.Partition != a.Partition {
			continue
		}
		for _, r := range p.Replicas {
			if r.BrokerID == a.Broker {
				return r, true
			}
		}
	}
	return cluster.PlanReplica{}, false
}

// recoveryHeld reports whether a is the recovery of a flapping follower
// whose backoff has not run out.
func (k *Controller) recoveryHeld(a cluster.Action) bool {
	if a.Kind != cluster.ActionRecover {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	f, ok := k.flaps[replicaKey{partKey{a.Topic, a.Partition}, a.Broker}]
	return ok && k.now().Before(f.retryAt)
}

// moving reports whether a is a catch-up the controller passes over: its
// follower was behind at another log end on the pass before, so it trails
// a write in flight rather than having missed one (stuck). The first pass
// passes over none.
func moving(in cluster.PlanInput, a cluster.Action, first bool) bool {
	return a.Kind == cluster.ActionCatchUp && !first && !stuck(in, a)
}

// stuck reports whether the follower a catch-up action names is stuck: it
// sat at the same log end on the pass before too. A follower that lags
// only because a write is in flight will have moved.
func stuck(in cluster.PlanInput, a cluster.Action) bool {
	r, ok := actionReplica(in, a)
	return ok && r.Stuck
}

// backingOff reports whether a was refused recently enough that it is not
// tried again yet: after a refusal the controller waits
// max(FailoverAfter, 1 s) before the same action on the same replica at the
// same leader epoch.
func (k *Controller) backingOff(a cluster.Action) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.refused[keyOf(a)]
	return ok && k.now().Before(r.retryAt)
}

func keyOf(a cluster.Action) actionKey {
	return actionKey{kind: a.Kind, replicaKey: replicaKey{partKey{a.Topic, a.Partition}, a.Broker}, epoch: a.LeaderEpoch}
}

// act carries out one action through cluster.Apply, which journals it
// with its reason. A refusal that changed nothing is journaled here, once
// for as long as it stays the same, and logged once; the action then waits
// (backingOff) before it is tried again. diverged says the replica was
// seen diverged: deactivated so within FlapWindow of its recovery, its
// next recovery waits (RecoveryBackoff), journaled once per episode.
func (k *Controller) act(a cluster.Action, diverged bool) error {
	rk := replicaKey{partKey{a.Topic, a.Partition}, a.Broker}
	res, err := k.cl.Apply(a)
	k.mu.Lock()
	var held *RecoveryHeldError
	switch {
	case a.Kind == cluster.ActionCatchUp && errors.Is(err, cluster.ErrReplicaDivergence):
		k.diverged[rk] = true
	case a.Kind == cluster.ActionRecover && err == nil:
		delete(k.diverged, rk)
		f := k.flaps[rk]
		f.recovered = k.now()
		k.flaps[rk] = f
	case a.Kind == cluster.ActionDeactivate && err == nil && diverged:
		held = k.flappedLocked(rk, a)
	}
	key := keyOf(a)
	last, seenBefore := k.refused[key]
	if err == nil {
		delete(k.refused, key)
	} else {
		wait := max(k.failoverAfter, time.Second)
		if errors.Is(err, cluster.ErrEpochAhead) {
			wait = EpochAheadRetry // the replica's broker is applying the metadata: moments
		}
		k.refused[key] = refusal{err: err.Error(), retryAt: k.now().Add(wait)}
	}
	k.mu.Unlock()
	if held != nil {
		k.holdRecovery(a, held)
	}
	k.metrics.action(a.Kind, res.Changed, err)
	if err == nil && !res.Changed {
		return nil // the write in flight finished first: nothing done
	}
	if err == nil {
		k.log.Info("controller action", "action", a.String(), "result", res.Summary)
		return nil
	}
	if seenBefore && last.err == err.Error() {
		return err // said already
	}
	k.log.Warn("controller action refused", "action", a.String(), "err", err)
	if !res.Journaled {
		if jerr := k.cl.JournalRefusal(a, err); jerr != nil {
			k.log.Error("the controller's refusal could not be journaled", "action", a.String(), "err", jerr)
		}
	}
	return err
}

// flappedLocked records that the follower rk was deactivated as diverged
// by a and returns the hold on its recoveries when that follows its last
// recovery within FlapWindow and is the first flap of an episode (the one
// to journal); later flaps only lengthen the hold. k.mu must be held.
func (k *Controller) flappedLocked(rk replicaKey, a cluster.Action) *RecoveryHeldError {
	now := k.now()
	f, ok := k.flaps[rk]
	if !ok || f.recovered.IsZero() || now.Sub(f.recovered) >= FlapWindow {
		f.count = 0 // it held long enough: a new divergence, not a loop
		k.flaps[rk] = f
		return nil
	}
	f.count++
	wait := RecoveryBackoff(f.count, k.failoverAfter)
	f.retryAt = now.Add(wait)
	k.flaps[rk] = f
	if f.count > 1 {
		k.log.Debug("controller holds a flapping follower's recovery", "topic", a.Topic, "partition", a.Partition,
			"broker", a.Broker, "flaps", f.count, "wait", wait)
		return nil
	}
	return &RecoveryHeldError{Topic: a.Topic, Partition: a.Partition, Broker: a.Broker,
		Again: now.Sub(f.recovered), Wait: wait}
}

// holdRecovery logs and journals, once per episode, that the recoveries
// of a's follower back off.
func (k *Controller) holdRecovery(a cluster.Action, held *RecoveryHeldError) {
	rec := cluster.Action{Kind: cluster.ActionRecover, Topic: a.Topic, Partition: a.Partition, Broker: a.Broker,
		LeaderEpoch: a.LeaderEpoch, Reason: fmt.Sprintf("%s/%d: follower %d diverged again after its recovery", a.Topic, a.Partition, a.Broker)}
	k.log.Warn("controller holds recoveries of a follower that diverges again", "action", rec.String(), "err", held)
	if err := k.cl.JournalRefusal(rec, held); err != nil {
		k.log.Error("the controller's hold could not be journaled", "action", rec.String(), "err", err)
	}
}
