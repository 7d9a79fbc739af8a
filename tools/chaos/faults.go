package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/faultnet"
)

// The fault kinds. Each strikes one node.
const (
	// FaultKill: SIGKILL, down past the failover delay, started again.
	FaultKill = "kill"
	// FaultPause: SIGSTOP past the failover delay, then SIGCONT.
	FaultPause = "pause"
	// FaultCut: every internal link to and from the node closes and
	// refuses (faultnet.Cut) past the failover delay.
	FaultCut = "cut"
	// FaultHold: every internal link to and from the node holds its bytes
	// without closing anything (faultnet.Held) past the failover delay.
	FaultHold = "hold"
	// FaultDiskFull: the node's data directory's file system is filled
	// for a few seconds.
	FaultDiskFull = "disk-full"
	// FaultRestart: SIGTERM, then started again at once.
	FaultRestart = "restart"
)

// Kinds lists the fault kinds of a mode, in the table's order; disk-full
// only when the run could mount a tmpfs.
func Kinds(mode string, disk bool) []string {
	kinds := []string{FaultKill, FaultPause, FaultCut, FaultHold, FaultRestart}
	if mode == ModeEmbedded {
		kinds = []string{FaultKill, FaultRestart}
	}
	if disk {
		kinds = append(kinds, FaultDiskFull)
	}
	return kinds
}

// failoverKinds are the faults after which whatever the victim led must
// move: a node that is down, paused or cut off past the failover delay.
var failoverKinds = []string{FaultKill, FaultPause, FaultCut, FaultHold}

// injector runs the faults of one run.
type injector struct {
	nodes         *Nodes
	history       *History
	rng           *rand.Rand
	kinds         []string
	disk          *Disk
	diskNode      int
	topic         string
	partitions    int
	failoverAfter time.Duration
	logf          func(format string, args ...any)
	// journalNext is where the next journal read starts.
	journalNext uint64
	journal     []apiclient.JournalEntry
}

// clusterView is what the live nodes say of the cluster at one moment.
type clusterView struct {
	leaders    []int
	epochs     []uint64
	controller int
}

// view asks the live nodes (but skip) for the topic's leaders and the
// controller, bounded.
func (in *injector) view(ctx context.Context, skip int) (clusterView, error) {
	var lastErr error
	for _, n := range in.nodes.Nodes {
		if n.ID == skip || !n.Live() {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		d, err := n.Client.Topic(rctx, in.topic)
		var cn *apiclient.ClusterNodesResponse
		if err == nil {
			cn, err = n.Client.ClusterNodes(rctx)
		}
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		v := clusterView{controller: cn.Controller}
		for _, ps := range d.Partitions {
			v.leaders = append(v.leaders, ps.Leader)
			v.epochs = append(v.epochs, ps.LeaderEpoch)
		}
		return v, nil
	}
	return clusterView{}, fmt.Errorf("chaos: no live node answered: %v", lastErr)
}

// holdFor is how long a fault of kind lasts: past the failover delay
// (twice it, and up to once more, at least two seconds) for the faults
// after which leadership must move.
func (in *injector) holdFor(kind string) time.Duration {
	base := max(2*in.failoverAfter, 2*time.Second)
	switch kind {
	case FaultRestart:
		return 0
	case FaultDiskFull:
		return 3*time.Second + time.Duration(in.rng.Int64N(int64(3*time.Second)))
	}
	return base + time.Duration(in.rng.Int64N(int64(max(in.failoverAfter, time.Second))))
}

// One strikes once: it chooses a kind and a victim, injects, holds,
// heals, waits for the cluster to be whole again, and records the fault.
func (in *injector) One(ctx context.Context) {
	kind := in.kinds[in.rng.IntN(len(in.kinds))]
	role := []string{"leader", "controller", "any"}[in.rng.IntN(3)]
	pick := in.rng.IntN(max(in.partitions, len(in.nodes.Nodes)))
	hold := in.holdFor(kind)
	before, err := in.view(ctx, 0)
	if err != nil {
		in.logf("before the fault: %v", err)
	}
	f := Fault{Kind: kind, Role: role}
	switch {
	case in.nodes.Mode == ModeEmbedded:
		f.Victim, f.Role = 1, "server"
	case kind == FaultDiskFull:
		f.Victim, f.Role = in.diskNode, "disk"
	case role == "leader" && len(before.leaders) > 0:
		f.Victim = before.leaders[pick%len(before.leaders)]
	case role == "controller" && before.controller != 0:
		f.Victim = before.controller
	default:
		f.Victim, f.Role = 1+pick%len(in.nodes.Nodes), "any"
	}
	f.Controller = in.nodes.Mode == ModeCluster && before.controller == f.Victim
	for p, l := range before.leaders {
		if in.nodes.Mode == ModeCluster && l == f.Victim { // embedded: leaders are logical brokers
			f.Partitions = append(f.Partitions, p)
		}
	}
	victim := in.nodes.Node(f.Victim)
	in.logf("fault %s of node %d (%s, controller %v, leads %v) for %v", kind, f.Victim, f.Role, f.Controller, f.Partitions, hold)

	f.Injected = time.Now()
	var injectErr error
	switch kind {
	case FaultKill:
		injectErr = victim.Kill()
	case FaultPause:
		injectErr = victim.Pause()
	case FaultCut:
		in.nodes.SetLinks(f.Victim, faultnet.Cut)
	case FaultHold:
		in.nodes.SetLinks(f.Victim, faultnet.Held)
	case FaultDiskFull:
		injectErr = in.disk.Fill()
	case FaultRestart:
		injectErr = victim.Stop(30 * time.Second)
	}
	if injectErr != nil {
		in.history.AddProblemAt(f.Injected, "fault %s of node %d: %v", kind, f.Victim, injectErr)
	}
	controllerMoved := in.holdFault(ctx, f, hold)

	switch kind {
	case FaultKill, FaultRestart:
		if !victim.Running() {
			injectErr = victim.Start()
		}
	case FaultPause:
		injectErr = victim.Resume()
	case FaultCut, FaultHold:
		in.nodes.SetLinks(f.Victim, faultnet.Open)
	case FaultDiskFull:
		injectErr = in.disk.Heal()
	}
	if injectErr != nil {
		in.history.AddProblemAt(f.Injected, "healing fault %s of node %d: %v", kind, f.Victim, injectErr)
	}
	f.Healed = time.Now()
	if err := in.waitHealthy(ctx, 90*time.Second); err != nil {
		f.Unhealed = err.Error()
		in.logf("not whole again: %v", err)
	} else {
		f.Healthy = time.Now()
	}
	in.measure(ctx, &f, before, controllerMoved)
	whole := "not whole again"
	if !f.Healthy.IsZero() {
		whole = fmt.Sprintf("whole again after %v", f.Healthy.Sub(f.Healed).Round(time.Millisecond))
	}
	in.logf("fault %s of node %d: failover %v, %s %s", kind, f.Victim, f.Failover, whole, f.Note)
	in.history.AddFault(f)
}

// settleCap bounds how long a fault is held past its drawn length while
// what the victim led has not moved yet: long enough to measure a slow
// failover, bounded so that a run goes on.
const settleCap = 15 * time.Second

// holdFault holds the fault for at least hold. After a fault that must
// move something (failoverKinds), it holds on, up to settleCap more,
// until the other nodes name another controller (when the victim was
// the controller) and another leader of every partition the victim led,
// so that the failover is measured however slow. It returns how long
// the controller took to move (zero when it did not, or did not have
// to).
func (in *injector) holdFault(ctx context.Context, f Fault, hold time.Duration) time.Duration {
	minEnd := f.Injected.Add(hold)
	if in.nodes.Mode != ModeCluster || !slices.Contains(failoverKinds, f.Kind) {
		sleep(ctx, time.Until(minEnd))
		return 0
	}
	capEnd := minEnd.Add(settleCap)
	var moved time.Duration
	for ctx.Err() == nil {
		settled := false
		if v, err := in.view(ctx, f.Victim); err == nil {
			if f.Controller && moved == 0 && v.controller != 0 && v.controller != f.Victim {
				moved = time.Since(f.Injected)
			}
			settled = !f.Controller || moved != 0
			for _, p := range f.Partitions {
				if p < len(v.leaders) && v.leaders[p] == f.Victim {
					settled = false
				}
			}
		}
		now := time.Now()
		if (settled && !now.Before(minEnd)) || !now.Before(capEnd) {
			return moved
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return moved
}

// waitHealthy waits until every node answers /api/ready, every replica of
// the topic is active, and the nodes agree on a controller.
func (in *injector) waitHealthy(ctx context.Context, timeout time.Duration) error {
	return WaitHealthy(ctx, in.nodes, in.topic, timeout)
}

// WaitHealthy waits until every node answers /api/ready, every replica
// of the topic is active as every node sees it, and (cluster mode) every
// node names the same controller.
func WaitHealthy(ctx context.Context, ns *Nodes, topic string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range ns.Nodes {
		if err := n.WaitReady(ctx, time.Until(deadline)); err != nil {
			return err
		}
	}
	return poll(ctx, time.Until(deadline), 100*time.Millisecond, func() (bool, string) {
		controller := -1
		for _, n := range ns.Nodes {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			d, err := n.Client.Topic(rctx, topic)
			var cn *apiclient.ClusterNodesResponse
			if err == nil && ns.Mode == ModeCluster {
				cn, err = n.Client.ClusterNodes(rctx)
			}
			cancel()
			if err != nil {
				return false, fmt.Sprintf("node %d: %v", n.ID, err)
			}
			for _, ps := range d.Partitions {
				if len(ps.Active) != len(ps.Assigned) {
					return false, fmt.Sprintf("node %d: partition %d: active %v of %v", n.ID, ps.Partition, ps.Active, ps.Assigned)
				}
			}
			if cn != nil {
				if cn.Controller == 0 || (controller != -1 && cn.Controller != controller) {
					return false, fmt.Sprintf("node %d names controller %d, another %d", n.ID, cn.Controller, controller)
				}
				controller = cn.Controller
			}
		}
		return true, ""
	})
}

// measure sets the fault's failover time: from injection to the
// controller's journal entry of the last failover of a partition the
// victim led, or to the controller's move, whichever is later.
func (in *injector) measure(ctx context.Context, f *Fault, before clusterView, controllerMoved time.Duration) {
	if in.nodes.Mode != ModeCluster {
		return
	}
	if err := in.readJournal(ctx); err != nil {
		f.Note += fmt.Sprintf("; journal: %v", err)
	}
	f.Failover = controllerMoved
	if f.Controller && controllerMoved == 0 && slices.Contains(failoverKinds, f.Kind) {
		f.Note += "; the controller did not move within the fault"
	}
	for _, p := range f.Partitions {
		var at time.Time
		for _, e := range in.journal {
			if e.Event != "failover" || e.Phase != "done" || e.Topic != in.topic || e.Partition == nil || *e.Partition != p {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, e.Time)
			if err == nil && t.After(f.Injected) && (f.Healthy.IsZero() || t.Before(f.Healthy)) {
				at = t
				break
			}
		}
		if at.IsZero() {
			if slices.Contains(failoverKinds, f.Kind) {
				f.Note += fmt.Sprintf("; partition %d (epoch %d) was not failed over", p, before.epochs[p])
			}
			continue
		}
		f.Failover = max(f.Failover, at.Sub(f.Injected))
	}
}

// readJournal reads the journal entries written since the last read,
// through the first node that answers.
func (in *injector) readJournal(ctx context.Context) error {
	var lastErr error
	for _, n := range in.nodes.Nodes {
		if !n.Live() {
			continue
		}
		for range 1000 {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			j, err := n.Client.Journal(rctx, in.journalNext, 1000)
			cancel()
			if err != nil {
				lastErr = err
				break
			}
			if len(j.Entries) == 0 {
				return nil
			}
			in.journal = append(in.journal, j.Entries...)
			in.journalNext = j.Next
		}
	}
	return lastErr
}
