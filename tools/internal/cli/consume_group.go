package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pystream/pystream/server/apiclient"
)

// consume -G: a member of an HTTP consumer group (docs/groups.md). Two
// goroutines share the work:
//
//   - the heartbeat goroutine joins, then heartbeats with what the member
//     holds, long-polling (max_wait_ms = the interval) so that a
//     rebalance is answered at once. An answer that changes the
//     assignment or the epoch is handed to the fetch loop, and the next
//     heartbeat waits until the loop has applied it: then it reports what
//     the loop holds, releasing what was taken away. A fenced member hands
//     over "lost" (give up everything, uncommitted) and joins again under
//     its id; an unknown one (the server restarted, the coordinator moved,
//     or its session ended) joins again under its id claiming what the
//     loop holds, and the answer says what it keeps.
//   - the fetch loop reads the partitions it holds as consume does, one
//     fetch each in turn, committing as the group's member. It applies a
//     handed assignment between fetches: a partition taken away is
//     committed, then dropped; a new one starts at the group's committed
//     offset.
//
// The member's lease: each successful heartbeat answer names the session
// timeout, and the member may read until that long after it sent the
// heartbeat. When no heartbeat has succeeded by then (the server is
// unreachable, the process was stopped), the fetch loop stops reading and
// drops every partition uncommitted — the server may have given them to
// another member — until a heartbeat succeeds again:
// docs/groups.md § Restarts and a new coordinator.
//
// A commit refused for a stale epoch is not an error: the newer answer is
// on its way to the loop, which waits for it (groupWait at most) and
// commits again with the next batch.

// groupAPI is what consume -G asks of the server. *apiclient.Client is
// one.
type groupAPI interface {
	consumeAPI
	GroupHeartbeat(ctx context.Context, group string, req apiclient.GroupHeartbeatRequest) (*apiclient.GroupHeartbeatResponse, error)
	CommitGroupOffset(ctx context.Context, group, topic string, partition int, memberID string, memberEpoch int32, offset uint64) (*apiclient.ConsumerOffsetResponse, error)
}

var _ groupAPI = (*apiclient.Client)(nil)

// Timing of a group member.
const (
	// retryMin and retryMax bound the wait between heartbeats that failed
	// for a reason that may pass (the server unreachable, 503).
	retryMin = 100 * time.Millisecond
	retryMax = 2 * time.Second
	// defaultInterval is the heartbeat interval until the server has said
	// its own.
	defaultInterval = 5 * time.Second
)

// assignment is one heartbeat answer, handed from the heartbeat goroutine
// to the fetch loop.
type assignment struct {
	memberID string
	epoch    int32
	parts    []apiclient.GroupTopicPartitions
	// lost is set when the member was fenced or is unknown: it gives up
	// every partition without committing (its commits would be refused),
	// and joins again.
	lost bool
	// interval is the server's heartbeat interval, session its session
	// timeout.
	interval, session time.Duration
}

// groupMember is the state of one consume -G run.
type groupMember struct {
	cs *consumer
	c  groupAPI
	o  consumeOptions
	// handoff carries assignments to the fetch loop; applied carries back
	// what the loop holds once it applied one.
	handoff chan assignment
	applied chan []apiclient.GroupTopicPartitions

	// memberID, epoch, interval and session are the fetch loop's: set
	// when it applies an assignment, read by its commits.
	memberID          string
	epoch             int32
	interval, session time.Duration
	// assigned is set once the loop applied a first assignment with a
	// partition in it (-e waits for it), until assignBy: set at the first
	// answer, a session timeout and a quarter (the longest the server
	// withholds a partition after a restart) and a heartbeat interval
	// later.
	assigned bool
	assignBy time.Time

	// mu guards lease and holding, which the two goroutines share.
	mu sync.Mutex
	// lease is when the member must stop reading unless a heartbeat
	// succeeds first (zero: the server named no session timeout); the
	// heartbeat goroutine renews it.
	lease time.Time
	// holding is what the fetch loop holds, as a heartbeat's owned; the
	// loop publishes it.
	holding []apiclient.GroupTopicPartitions
	// lapsed is set while the loop has stopped reading for a lapsed
	// lease (the fetch loop's).
	lapsed bool
}

// renew extends the lease to session after sent, the moment the heartbeat
// that succeeded was sent.
func (gm *groupMember) renew(sent time.Time, sessionMS int64) {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	if sessionMS > 0 {
		gm.lease = sent.Add(time.Duration(sessionMS) * time.Millisecond)
	}
}

// leaseOver reports whether the lease ran out.
func (gm *groupMember) leaseOver() bool {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	return !gm.lease.IsZero() && time.Now().After(gm.lease)
}

// owned is what the fetch loop holds now.
func (gm *groupMember) owned() []apiclient.GroupTopicPartitions {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	return gm.holding
}

// publish records what the fetch loop holds, for the next heartbeat.
func (gm *groupMember) publish() {
	held := gm.held()
	gm.mu.Lock()
	defer gm.mu.Unlock()
	gm.holding = held
}

func (a *app) consumeGroup(ctx context.Context, stopSignals func(), c groupAPI, o consumeOptions) error {
	cs := &consumer{a: a, c: c, o: o, out: bufio.NewWriterSize(a.env.Stdout, 64<<10)}
	defer cs.out.Flush()
	gm := &groupMember{cs: cs, c: c, o: o, handoff: make(chan assignment), applied: make(chan []apiclient.GroupTopicPartitions, 1),
		interval: defaultInterval}
	cs.commitGroup = gm.commit

	hbCtx, stopHeartbeats := context.WithCancel(context.Background())
	hbDone := make(chan error, 1)
	go func() { hbDone <- gm.heartbeats(hbCtx) }()
	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	loopErr := make(chan error, 1)
	go func() { loopErr <- gm.loop(loopCtx) }()

	var err, hbErr error
	select {
	case err = <-loopErr:
	case hbErr = <-hbDone:
		// The heartbeats stopped for good (a refusal that joining again
		// cannot cure): so does the loop.
		stopLoop()
		err = <-loopErr
		hbDone <- hbErr
	}
	interrupted := ctx.Err() != nil
	stopSignals() // a second Ctrl-C now kills at once
	if err != nil && !interrupted {
		err = fmt.Errorf("consume -G %s: %w", o.group, err)
	} else {
		err = nil
	}
	if o.exitAtEnd && err == nil && !interrupted && cs.printed == 0 && gm.assigned {
		fmt.Fprintf(a.env.Stderr, "pystream: note: consume -G %s: read no records: every partition assigned to this member was at its high watermark from the group's committed offset\n", o.group)
	}
	errs := []error{err, cs.out.Flush()}
	// Commit every position, then stop heartbeating and leave: the
	// partitions go to the others at once, from these offsets.
	cctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	errs = append(errs, gm.commitAll(cctx))
	stopHeartbeats()
	if e := <-hbDone; e != nil && !errors.Is(e, context.Canceled) {
		errs = append(errs, e)
	}
	errs = append(errs, gm.leave(cctx))
	return errors.Join(errs...)
}

// heartbeats joins the group and heartbeats until ctx ends. It returns an
// error only for a refusal that joining again cannot cure (an invalid
// group or topic, a group of classic members).
func (gm *groupMember) heartbeats(ctx context.Context) error {
	var id string
	var epoch int32
	interval, wait := defaultInterval, retryMin
	join, warned := true, false
	for ctx.Err() == nil {
		owned := gm.owned()
		req := apiclient.GroupHeartbeatRequest{MemberID: id, MemberEpoch: epoch, Owned: owned, MaxWaitMS: uint32(interval.Milliseconds()), ClientID: "pystream"}
		if join {
			req = apiclient.GroupHeartbeatRequest{MemberID: id, MemberEpoch: 0, Topics: gm.o.topics, Owned: owned, ClientID: "pystream"}
		}
		sent := time.Now()
		res, err := gm.c.GroupHeartbeat(ctx, gm.o.group, req)
		var e *apiclient.Error
		isAPI := errors.As(err, &e)
		switch {
		case err == nil:
			gm.renew(sent, res.SessionTimeoutMS)
			wait, warned = retryMin, false
			if res.HeartbeatIntervalMS > 0 {
				interval = time.Duration(res.HeartbeatIntervalMS) * time.Millisecond
			}
			changed := join || res.MemberEpoch != epoch || !sameParts(res.Assignment, owned)
			join, id, epoch = false, res.MemberID, res.MemberEpoch
			if changed {
				if _, ok := gm.handOff(ctx, assignment{memberID: id, epoch: epoch, parts: res.Assignment, interval: interval,
					session: time.Duration(res.SessionTimeoutMS) * time.Millisecond}); !ok {
					return nil
				}
			}
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, apiclient.ErrFencedMemberEpoch):
			fmt.Fprintf(gm.cs.a.env.Stderr, "pystream: note: %s; giving up its partitions and joining again\n", e.Message)
			if _, ok := gm.handOff(ctx, assignment{memberID: id, lost: true}); !ok {
				return nil
			}
			join, epoch = true, 0
		case errors.Is(err, apiclient.ErrUnknownMemberID):
			// The server forgot the member: it joins again claiming what
			// it holds, and keeps what no other member holds. Until the
			// answer it reads on, within its lease.
			fmt.Fprintf(gm.cs.a.env.Stderr, "pystream: note: %s; joining again with the partitions it holds\n", e.Message)
			join, epoch = true, 0
		case isAPI && (e.Status == 400 || e.Status == 409 || e.Status == 401 || e.Status == 403 || e.Status == 404):
			return gm.cs.a.apiError("heartbeat in group "+gm.o.group, err)
		default:
			if !warned {
				warned = true
				fmt.Fprintf(gm.cs.a.env.Stderr, "pystream: note: group %s: heartbeat failed (%v); retrying\n", gm.o.group, rootCause(err))
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, retryMax, interval)
		}
	}
	return nil
}

// handOff gives a to the fetch loop and waits until it has applied it;
// it returns what the loop holds then. ok is false when ctx ended first.
func (gm *groupMember) handOff(ctx context.Context, a assignment) (held []apiclient.GroupTopicPartitions, ok bool) {
	select {
	case gm.handoff <- a:
	case <-ctx.Done():
		return nil, false
	}
	select {
	case held = <-gm.applied:
		return held, true
	case <-ctx.Done():
		return nil, false
	}
}

// sameParts reports whether two assignments hold the same partitions.
func sameParts(a, b []apiclient.GroupTopicPartitions) bool {
	return slices.EqualFunc(a, b, func(x, y apiclient.GroupTopicPartitions) bool {
		return x.Topic == y.Topic && slices.Equal(x.Partitions, y.Partitions)
	})
}

// loop reads the partitions the member holds until ctx ends, -n is
// reached, or with -e every one it holds is at its end.
func (gm *groupMember) loop(ctx context.Context) error {
	cs := gm.cs
	wait := pollMin
	for ctx.Err() == nil {
		select {
		case a := <-gm.handoff:
			if err := gm.apply(ctx, a); err != nil {
				return err
			}
		default:
		}
		got := false
		for _, cur := range slices.Clone(cs.cursors) {
			if gm.dropLapsed() {
				break
			}
			if cs.o.exitAtEnd && cur.atEnd() {
				continue
			}
			n, done, err := cs.fetch(ctx, cur)
			if errors.Is(err, errStaleMember) {
				if err := gm.awaitAssignment(ctx); err != nil {
					return err
				}
				break
			}
			if err != nil || done {
				return err
			}
			got = got || n > 0
		}
		if cs.o.exitAtEnd && gm.assigned && cs.allAtEnd() {
			return nil
		}
		if cs.o.exitAtEnd && !gm.assigned && !gm.assignBy.IsZero() && time.Now().After(gm.assignBy) {
			return fmt.Errorf("no partitions of %s were assigned to this member within %v: the group's other members hold them all, "+
				"or the server withholds them until the session of their last owner has ended (docs/groups.md § Restarts and a new coordinator)",
				strings.Join(gm.o.topics, ", "), gm.assignWait())
		}
		if got {
			wait = pollMin
			continue
		}
		select {
		case <-ctx.Done():
		case a := <-gm.handoff:
			if err := gm.apply(ctx, a); err != nil {
				return err
			}
		case <-time.After(wait):
			wait = min(2*wait, pollMax)
		}
	}
	return nil
}

// dropLapsed drops every partition the loop holds, uncommitted, once the
// lease ran out: the server may have given them to another member. It
// reports whether the lease is out. Reading resumes with the next
// assignment a successful heartbeat hands over.
func (gm *groupMember) dropLapsed() bool {
	if !gm.leaseOver() {
		gm.lapsed = false
		return false
	}
	if !gm.lapsed {
		gm.lapsed = true
		fmt.Fprintf(gm.cs.a.env.Stderr, "pystream: note: group %s: no heartbeat succeeded within the session timeout; "+
			"it stops reading its partitions, which may be another member's now, until a heartbeat succeeds\n", gm.o.group)
	}
	if len(gm.cs.cursors) > 0 {
		gm.cs.cursors = nil
		gm.publish()
	}
	return true
}

// errStaleMember is a commit refused because the member's epoch moved on
// (or it is no longer a member): the heartbeat goroutine has the news.
var errStaleMember = errors.New("consume: the member's epoch moved on")

// awaitAssignment waits for the heartbeat goroutine's next assignment,
// after a commit was refused as stale, and applies it.
func (gm *groupMember) awaitAssignment(ctx context.Context) error {
	select {
	case a := <-gm.handoff:
		return gm.apply(ctx, a)
	case <-ctx.Done():
		return nil
	case <-time.After(3 * gm.interval):
		return fmt.Errorf("consume: a commit was refused as stale, and no newer heartbeat answer came in %s", 3*gm.interval)
	}
}

// apply makes the fetch loop hold a's partitions: every partition held is
// committed at a's epoch (unless the member is lost), those taken away
// are dropped, new ones start at the group's committed offset. It then
// tells the heartbeat goroutine what it holds.
func (gm *groupMember) apply(ctx context.Context, a assignment) error {
	cs := gm.cs
	gm.memberID, gm.epoch = a.memberID, a.epoch
	if a.interval > 0 {
		gm.interval = a.interval
	}
	want := map[[2]any]bool{}
	for _, tp := range a.parts {
		for _, p := range tp.Partitions {
			want[[2]any{tp.Topic, int(p)}] = true
		}
	}
	var kept []*cursor
	var errs []error
	for _, cur := range cs.cursors {
		// Every partition held is committed at the new epoch: those
		// taken away before they go, those kept because a commit at the
		// old epoch may have been refused.
		if !a.lost {
			if err := gm.commit(ctx, cur); err != nil && !errors.Is(err, errStaleMember) {
				errs = append(errs, err)
			}
		}
		if want[[2]any{cur.topic, cur.partition}] && !a.lost {
			kept = append(kept, cur)
			delete(want, [2]any{cur.topic, cur.partition})
		}
	}
	for _, tp := range a.parts {
		for _, p := range tp.Partitions {
			if !want[[2]any{tp.Topic, int(p)}] || a.lost {
				continue
			}
			cur := &cursor{topic: tp.Topic, partition: int(p)}
			co, err := gm.c.ConsumerOffset(ctx, gm.o.group, tp.Topic, int(p))
			if err != nil {
				errs = append(errs, cs.a.apiError(fmt.Sprintf("consume -G %s: committed offset of %s", gm.o.group, cs.where(cur)), err))
				continue
			}
			cur.committed = co.Offset
			if co.Offset != nil {
				cur.pos = *co.Offset
			}
			kept = append(kept, cur)
		}
	}
	slices.SortFunc(kept, func(x, y *cursor) int {
		if x.topic != y.topic {
			if x.topic < y.topic {
				return -1
			}
			return 1
		}
		return x.partition - y.partition
	})
	cs.cursors = kept
	gm.assigned = gm.assigned || (!a.lost && len(kept) > 0)
	if gm.assignBy.IsZero() && !a.lost {
		gm.session = a.session
		gm.assignBy = time.Now().Add(gm.assignWait())
	}
	gm.publish()
	select {
	case gm.applied <- gm.held():
	default:
	}
	return errors.Join(errs...)
}

// assignWait is how long -e waits for a first partition: a session
// timeout and a quarter, and a heartbeat interval.
func (gm *groupMember) assignWait() time.Duration {
	return gm.session + gm.session/4 + gm.interval
}

// held is what the fetch loop holds, as a heartbeat's owned.
func (gm *groupMember) held() []apiclient.GroupTopicPartitions {
	var out []apiclient.GroupTopicPartitions
	for _, cur := range gm.cs.cursors {
		if n := len(out); n > 0 && out[n-1].Topic == cur.topic {
			out[n-1].Partitions = append(out[n-1].Partitions, int32(cur.partition))
			continue
		}
		out = append(out, apiclient.GroupTopicPartitions{Topic: cur.topic, Partitions: []int32{int32(cur.partition)}})
	}
	return out
}

// commit commits cur's position as the group's member, when it moves the
// offset forward. A stale epoch or a partition the server no longer
// counts as held is errStaleMember; an offset below the committed one
// (committed by a member that held the partition before) is a note, and
// reading goes on.
func (gm *groupMember) commit(ctx context.Context, cur *cursor) error {
	cs := gm.cs
	if !cur.consumed || (cur.committed != nil && cur.pos <= *cur.committed) {
		return nil
	}
	res, err := gm.c.CommitGroupOffset(ctx, gm.o.group, cur.topic, cur.partition, gm.memberID, gm.epoch, cur.pos)
	var e *apiclient.Error
	switch {
	case err == nil:
		cur.committed = res.Offset
		return nil
	case errors.As(err, &e) && e.Committed != nil:
		committed := *e.Committed
		cur.committed = &committed
		fmt.Fprintf(cs.a.env.Stderr, "pystream: note: %s: the group's committed offset %d is past position %d; committing resumes past it\n",
			cs.where(cur), committed, cur.pos)
		return nil
	case errors.Is(err, apiclient.ErrConflict) && e.HighWatermark == nil:
		return errStaleMember
	}
	return cs.a.apiError(fmt.Sprintf("consume -G %s: commit %s at %d", gm.o.group, cs.where(cur), cur.pos), err)
}

// commitAll commits every partition held, at the end of the run. A
// commit refused as stale takes the assignment the heartbeat goroutine
// may be handing over, and is tried once more.
func (gm *groupMember) commitAll(ctx context.Context) error {
	var errs []error
	for _, cur := range slices.Clone(gm.cs.cursors) {
		err := gm.commit(ctx, cur)
		if errors.Is(err, errStaleMember) {
			select {
			case a := <-gm.handoff:
				errs = append(errs, gm.apply(ctx, a))
				if slices.Contains(gm.cs.cursors, cur) {
					err = gm.commit(ctx, cur)
				} else {
					err = nil // committed by apply as it was taken away
				}
			default:
			}
		}
		if errors.Is(err, errStaleMember) {
			err = fmt.Errorf("consume -G %s: the last commit of %s at %d was refused: the member's epoch moved on", gm.o.group, gm.cs.where(cur), cur.pos)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// leave tells the group the member is gone, so that its partitions move
// at once rather than after its session timeout. A member the group no
// longer knows has nothing to leave.
func (gm *groupMember) leave(ctx context.Context) error {
	if gm.memberID == "" {
		return nil
	}
	_, err := gm.c.GroupHeartbeat(ctx, gm.o.group, apiclient.GroupHeartbeatRequest{MemberID: gm.memberID, MemberEpoch: -1})
	if err == nil || errors.Is(err, apiclient.ErrUnknownMemberID) {
		return nil
	}
	return gm.cs.a.apiError("consume -G "+gm.o.group+": leave the group", err)
}
