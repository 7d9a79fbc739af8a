package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pystream/pystream/log/segment"
)

// This file is the follower's side of replication, the same in one process
// and across processes. A follower takes records only from the leader its
// metadata names, at the epoch its metadata holds: an older epoch is
// refused (the sender was replaced: it is fenced), a newer one is waited
// for briefly (this broker has not applied the change yet). Before it
// takes the first records of an epoch it proves its log a prefix of the
// new leader's: it compares what it holds above the last point it knows
// committed with the leader's log, and cuts what differs — records no
// leader acknowledged — into a quarantine file, journaled.

// epochWait bounds how long a follower waits for its metadata to reach a
// sender's newer epoch.
const epochWait = time.Second

// Replicate takes a leader's records, or answers its probe, on a replica
// this Cluster hosts (what Transport.Replicate carries). It returns once
// the records are durable. A request from a leader that is not the
// partition's at req.Epoch is a *StaleEpochError; one at an epoch not yet
// applied here, after epochWait, an *EpochAheadError; records that start
// past the replica's end a *BehindError; a retried record that differs
// from the one held here a *ReplicaDivergenceError. A refused request
// leaves the replica as it was.
func (c *Cluster) Replicate(ctx context.Context, to int, req ReplicateRequest) (ReplicateResponse, error) {
	m, err := c.hosted(to)
	if err != nil {
		return ReplicateResponse{}, err
	}
	return m.replicate(ctx, req)
}

func (m *member) replicate(ctx context.Context, req ReplicateRequest) (ReplicateResponse, error) {
	pm, err := m.c.partitionAtEpoch(ctx, req.Topic, req.Partition, req.Epoch)
	if err != nil {
		return ReplicateResponse{}, err
	}
	if pm.Leader != req.Leader || pm.Leader == m.id() {
		return ReplicateResponse{}, &StaleEpochError{Topic: req.Topic, Partition: req.Partition, Epoch: pm.LeaderEpoch, Asked: req.Epoch,
			Reason: fmt.Sprintf("broker %d leads epoch %d, not broker %d", pm.Leader, pm.LeaderEpoch, req.Leader)}
	}
	if !slices.Contains(pm.Replicas, m.id()) {
		return ReplicateResponse{}, fmt.Errorf("cluster: broker %d holds no replica of %s/%d: %w", m.id(), req.Topic, req.Partition, ErrNotAssigned)
	}
	k := replicaKey{req.Topic, req.Partition}
	r := m.replica(k)
	r.fmu.Lock()
	defer r.fmu.Unlock()
	var res ReplicateResponse
	if req.Reopen {
		if res.Reopened, err = m.b.reopenReplica(k); err != nil {
			return res, err
		}
	}
	l, err := m.b.replica(req.Topic, req.Partition, m.c.createMissing)
	if err != nil {
		return res, err
	}
	if req.LogStartOnly {
		// A retention pass, a catch-up or a recovery taking the leader's
		// log start: they journal what it changed.
		switch end := l.NextOffset(); {
		case end < req.LogStart && req.Reset:
			if err := m.b.resetReplica(req.Topic, req.Partition, req.LogStart); err != nil {
				return res, fmt.Errorf("cluster: reset replica to the leader's log start %d: %w", req.LogStart, err)
			}
			res.Reset, res.ResetFrom = true, end
		case end >= req.LogStart && l.LogStart() < req.LogStart:
			removed, err := l.AdvanceStart(req.LogStart)
			res.Removed = RemovedSegments(m.id(), removed)
			if err != nil {
				return res, fmt.Errorf("cluster: advance replica to the leader's log start %d: %w", req.LogStart, err)
			}
		}
		res.End, res.LogStart = l.NextOffset(), l.LogStart()
		return res, nil
	}
	if !r.synced || r.syncedEpoch != pm.LeaderEpoch {
		if err := m.syncLocked(ctx, r, k, pm, l, req.HighWatermark); err != nil {
			return res, err
		}
	}
	if err := m.takeLogStartLocked(ctx, k, l, req.LogStart, req.Leader, &res); err != nil {
		return res, err
	}
	end := l.NextOffset()
	recs := req.Records
	if len(recs) > 0 {
		base := recs[0].Offset
		switch {
		case base > end:
			return res, &BehindError{Topic: req.Topic, Partition: req.Partition, End: end, Base: base}
		case base < end:
			// Sent again (a retry): what overlaps must be what is held.
			n := min(int(end-base), len(recs))
			held, err := l.Read(base, n)
			if err != nil {
				return res, err
			}
			if mm := CompareRecords(held, recs[:n]); mm.Differs || len(held) != n {
				// Refused, and nothing changes: the sender is answered, and
				// a leader that sent it has its catch-up refused the same
				// way (the controller then deactivates and recovers the
				// replica, journaled). A flag kept here would let any
				// request naming the leader mark the replica diverged.
				return res, &ReplicaDivergenceError{Topic: req.Topic, Partition: req.Partition, BrokerID: m.id(), Offset: base + uint64(mm.Index),
					Reason: "differs from its leader's records sent again: " + mm.Reason}
			}
			recs = recs[n:]
		}
		// A table that describes the log up to here (checked by the
		// record at its end, which a cut could have replaced) takes the
		// appended records too, so that a roll costs no reading.
		fits := r.producers != nil && r.producers.end == l.NextOffset() && r.producers.fits(l)
		if len(recs) > 0 {
			// The history first: after a crash, no record is found in a
			// run it was not written in.
			h, err := m.b.epochsOf(req.Topic, req.Partition)
			if err == nil {
				err = h.follow(recs[0].Offset, req.Runs)
			}
			if err != nil {
				return res, err
			}
		}
		if err := l.AppendRecords(recs); err != nil {
			return res, err
		}
		if fits && len(recs) > 0 {
			r.producers.apply(recs)
		}
		m.c.snapshotAsFollower(m, r, l, pm.LeaderEpoch)
	}
	res.End, res.LogStart = l.NextOffset(), l.LogStart()
	r.hw.Raise(min(req.HighWatermark, res.End))
	return res, nil
}

// partitionAtEpoch returns a partition's metadata once this Cluster's copy
// has reached epoch (waiting up to epochWait), refusing an older one.
func (c *Cluster) partitionAtEpoch(ctx context.Context, topicName string, partition int, epoch uint64) (PartitionMetadata, error) {
	pm, err := c.waitPartition(ctx, epochWait, topicName, partition, func(pm PartitionMetadata) bool { return pm.LeaderEpoch >= epoch })
	if err != nil {
		return pm, err
	}
	switch {
	case epoch < pm.LeaderEpoch:
		return pm, &StaleEpochError{Topic: topicName, Partition: partition, Epoch: pm.LeaderEpoch, Asked: epoch}
	case epoch > pm.LeaderEpoch:
		return pm, &EpochAheadError{Topic: topicName, Partition: partition, Epoch: pm.LeaderEpoch, Asked: epoch}
	}
	return pm, nil
}

// waitPartition returns a partition's metadata once cond holds of it, or
// as it is after wait (or when ctx ends). A partition this Cluster's copy
// does not know yet is waited for too.
func (c *Cluster) waitPartition(ctx context.Context, wait time.Duration, topicName string, partition int, cond func(PartitionMetadata) bool) (PartitionMetadata, error) {
	var timer <-chan time.Time
	for {
		ch := c.store.Changed()
		pm, err := readPartition(c.store, topicName, partition)
		if err == nil && cond(pm) {
			return pm, nil
		}
		if timer == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-ch:
		case <-timer:
			return pm, err
		case <-ctx.Done():
			return pm, err
		}
	}
}

// syncLocked proves the replica a prefix of pm's leader's log: it compares
// its records from the last point it knows committed — the high watermark
// it was last told, or the leader's (leaderHW) when it is an active
// replica, which holds every record below it — with the leader's, and cuts
// back, into quarantine, from the first that differs or that the leader
// does not have. r.fmu must be held.
func (m *member) syncLocked(ctx context.Context, r *replicaState, k replicaKey, pm PartitionMetadata, l *segment.Log, leaderHW uint64) error {
	end := l.NextOffset()
	from := r.hw.Load()
	if slices.Contains(pm.Active, m.id()) {
		from = max(from, leaderHW)
	}
	common := max(min(from, end), l.LogStart())
	for common < end {
		res, err := m.c.transport.Records(ctx, pm.Leader, RecordsRequest{Topic: k.topic, Partition: k.partition, From: common, MaxBytes: maxPushBytes})
		if err != nil {
			return fmt.Errorf("cluster: prove %s/%d against leader %d: %w", k.topic, k.partition, pm.Leader, err)
		}
		if len(res.Records) == 0 {
			if res.LogStart > common && common < res.LogEnd {
				// The leader no longer holds these: what retention deleted
				// there cannot be compared, and is dropped below.
				common = min(res.LogStart, end)
				continue
			}
			break // the leader's log ends here
		}
		held, err := l.Read(common, int(min(uint64(len(res.Records)), end-common)))
		if err != nil {
			return err
		}
		mm := CompareRecords(held, res.Records)
		common += uint64(mm.Index)
		if mm.Differs || len(held) < len(res.Records) {
			break
		}
	}
	if common < end {
		now := m.c.now()
		path, err := m.b.CutReplica(k.topic, k.partition, common, now)
		if err != nil {
			return err
		}
		m.c.logf("records no leader acknowledged were cut from %s/%d on broker %d and kept in quarantine: offsets %d..%d, leader %d at epoch %d, file %s",
			k.topic, k.partition, m.id(), common, end-1, pm.Leader, pm.LeaderEpoch, path)
		_, err = m.c.store.Journal(ctx, JournalEntry{Event: EventRecover, Phase: PhaseDone, By: ByController,
			Topic: k.topic, Partition: k.partition, Broker: m.id(),
			Summary: fmt.Sprintf("%s/%d: broker %d cuts offsets %d..%d (%d records, never acknowledged) to follow leader %d at epoch %d",
				k.topic, k.partition, m.id(), common, end-1, end-common, pm.Leader, pm.LeaderEpoch),
			Quarantine: m.c.relative(path), Cut: &JournalCut{From: common, To: end}})
		if err != nil {
			m.c.logf("the journal entry of a cut could not be written: %v", err)
		}
	}
	r.synced, r.syncedEpoch = true, pm.LeaderEpoch
	return nil
}

// takeLogStartLocked gives this replica its leader's log start: it drops
// the segments wholly below it (segment.Log.AdvanceStart), or, when its
// log ends below it, starts again empty there (segment.Log.ResetTo). Both
// are journaled, and reported in res. r.fmu must be held.
func (m *member) takeLogStartLocked(ctx context.Context, k replicaKey, l *segment.Log, start uint64, leader int, res *ReplicateResponse) error {
	if start <= l.LogStart() {
		return nil
	}
	topicName, partition := k.topic, k.partition
	where := fmt.Sprintf("%s/%d", topicName, partition)
	if end := l.NextOffset(); end < start {
		if err := m.b.resetReplica(topicName, partition, start); err != nil {
			return fmt.Errorf("cluster: %s: reset to leader %d's log start %d: %w", where, leader, start, err)
		}
		res.Reset, res.ResetFrom = true, end
		m.journal(ctx, JournalEntry{Event: EventCatchUp, Phase: PhaseDone, By: ByRetention, Topic: topicName, Partition: partition, Broker: m.id(),
			Summary: fmt.Sprintf("%s: broker %d's log ended at %d, below leader %d's log start %d: reset to start there", where, m.id(), end, leader, start)})
		return nil
	}
	removed, err := l.AdvanceStart(start)
	res.Removed = RemovedSegments(m.id(), removed)
	if len(removed) > 0 {
		e := JournalEntry{Event: EventRetention, Phase: PhaseDone, By: ByRetention, Topic: topicName, Partition: partition, Broker: m.id(),
			Removed: res.Removed, Summary: fmt.Sprintf("%s: broker %d follows leader %d's log start %d; deleted %s", where, m.id(), leader, start, DescribeRemoved(res.Removed))}
		if err != nil {
			e.Phase, e.Error = PhaseFailed, m.c.relative(err.Error())
		}
		m.journal(ctx, e)
	}
	if err != nil {
		return fmt.Errorf("cluster: %s: take leader %d's log start %d: %w", where, leader, start, err)
	}
	return nil
}

// journal records e; what happened does not depend on it, so a failure is
// logged rather than returned.
func (m *member) journal(ctx context.Context, e JournalEntry) {
	if _, err := m.c.store.Journal(ctx, e); err != nil && !errors.Is(err, context.Canceled) {
		m.c.logf("a journal entry could not be written: %s: %v", e.Summary, err)
	}
}
