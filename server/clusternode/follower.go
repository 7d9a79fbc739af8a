package clusternode

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/replication"
)

// This file is the follower's side. A follower takes records only from
// the leader its metadata names, at the epoch its metadata holds: an older
// epoch is refused (the sender was replaced: it is fenced), a newer one is
// waited for briefly (this node has not applied the change yet). Before it
// takes the first records of an epoch it proves its log a prefix of the
// new leader's: it compares what it holds with the leader's log and cuts
// what differs — records no leader acknowledged — into a quarantine file.

// epochWait bounds how long a follower waits for its metadata to reach a
// sender's newer epoch.
const epochWait = time.Second

// Replicate takes a leader's records (replication.Peer).
func (n *Node) Replicate(ctx context.Context, req replication.ReplicateRequest) (replication.ReplicateResponse, error) {
	pm, err := n.partitionAtEpoch(ctx, req.Topic, req.Partition, req.Epoch)
	if err != nil {
		return replication.ReplicateResponse{}, err
	}
	if pm.Leader != req.Leader || pm.Leader == n.cfg.ID {
		return replication.ReplicateResponse{}, &replication.Error{Code: replication.CodeStaleEpoch, Epoch: pm.LeaderEpoch,
			Message: fmt.Sprintf("%s/%d: broker %d leads epoch %d, not broker %d", req.Topic, req.Partition, pm.Leader, pm.LeaderEpoch, req.Leader)}
	}
	if !slices.Contains(pm.Replicas, n.cfg.ID) {
		return replication.ReplicateResponse{}, replication.Errorf(replication.CodeNotAssigned, "broker %d holds no replica of %s/%d", n.cfg.ID, req.Topic, req.Partition)
	}
	r := n.replica(req.Topic, req.Partition)
	r.fmu.Lock()
	defer r.fmu.Unlock()
	l, err := n.broker.Replica(req.Topic, req.Partition, true)
	if err != nil {
		return replication.ReplicateResponse{}, err
	}
	if !r.synced || r.syncedEpoch != pm.LeaderEpoch {
		if err := n.syncLocked(ctx, r, pm, l); err != nil {
			return replication.ReplicateResponse{}, err
		}
	}
	if err := n.takeLogStartLocked(r, l, req.LogStart, req.Leader); err != nil {
		return replication.ReplicateResponse{}, err
	}
	end := l.NextOffset()
	recs := req.Records
	if len(recs) > 0 {
		base := recs[0].Offset
		switch {
		case base > end:
			return replication.ReplicateResponse{}, &replication.Error{Code: replication.CodeBehind, End: end,
				Message: fmt.Sprintf("%s/%d ends at %d, before %d", req.Topic, req.Partition, end, base)}
		case base < end:
			// Sent again (a retry): what overlaps must be what we hold.
			n := min(int(end-base), len(recs))
			held, err := l.Read(base, n)
			if err != nil {
				return replication.ReplicateResponse{}, err
			}
			if m := cluster.CompareRecords(held, recs[:n]); m.Differs || len(held) != n {
				r.diverged = true
				return replication.ReplicateResponse{}, &replication.Error{Code: replication.CodeDiverged, End: end,
					Message: fmt.Sprintf("%s/%d differs from its leader at offset %d: %s", req.Topic, req.Partition, base+uint64(m.Index), m.Reason)}
			}
			recs = recs[n:]
		}
		if err := l.AppendRecords(recs); err != nil {
			return replication.ReplicateResponse{}, err
		}
	}
	end = l.NextOffset()
	n.raiseHW(r, min(req.HighWatermark, end))
	return replication.ReplicateResponse{End: end}, nil
}

// partitionAtEpoch returns the partition's metadata once this node has
// applied epoch (waiting up to epochWait), refusing an older epoch.
func (n *Node) partitionAtEpoch(ctx context.Context, topicName string, partition int, epoch uint64) (cluster.PartitionMetadata, error) {
	wctx, cancel := context.WithTimeout(ctx, epochWait)
	defer cancel()
	n.fsm.waitFor(wctx, func(s *cluster.MetaState) bool {
		pm, err := s.Partition(topicName, partition)
		return err == nil && pm.LeaderEpoch >= epoch
	})
	pm, err := n.fsm.partition(topicName, partition)
	if err != nil {
		return pm, &replication.Error{Code: replication.CodeEpochAhead, Message: err.Error()}
	}
	switch {
	case epoch < pm.LeaderEpoch:
		return pm, &replication.Error{Code: replication.CodeStaleEpoch, Epoch: pm.LeaderEpoch,
			Message: fmt.Sprintf("%s/%d is at leader epoch %d; epoch %d is over", topicName, partition, pm.LeaderEpoch, epoch)}
	case epoch > pm.LeaderEpoch:
		return pm, &replication.Error{Code: replication.CodeEpochAhead, Epoch: pm.LeaderEpoch,
			Message: fmt.Sprintf("%s/%d: this broker has applied epoch %d, not yet %d", topicName, partition, pm.LeaderEpoch, epoch)}
	}
	return pm, nil
}

// syncLocked proves the replica a prefix of pm's leader's log: it compares
// its records from the last high watermark it was told (0 after a
// restart) with the leader's and cuts back, into quarantine, from the
// first that differs or that the leader does not have. r.fmu must be held.
func (n *Node) syncLocked(ctx context.Context, r *replica, pm cluster.PartitionMetadata, l *segment.Log) error {
	addr, err := n.addrOf(pm.Leader)
	if err != nil {
		return err
	}
	end := l.NextOffset()
	common := max(min(r.highWatermark(), end), l.LogStart())
	for common < end {
		res, err := n.rpc.Records(ctx, addr, replication.RecordsRequest{Topic: r.topic, Partition: r.partition, From: common, MaxBytes: maxPushBytes})
		if err != nil {
			return fmt.Errorf("clusternode: sync %s/%d with leader %d: %w", r.topic, r.partition, pm.Leader, err)
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
		m := cluster.CompareRecords(held, res.Records)
		common += uint64(m.Index)
		if m.Differs || len(held) < len(res.Records) {
			break
		}
	}
	if common < end {
		path, err := n.broker.CutReplica(r.topic, r.partition, common, n.now())
		if err != nil {
			return err
		}
		n.log.Warn("records no leader acknowledged were cut from a replica and kept in quarantine",
			"partition", fmt.Sprintf("%s/%d", r.topic, r.partition), "from", common, "to", end, "leader", pm.Leader, "epoch", pm.LeaderEpoch, "file", path)
		n.journal(cluster.JournalEntry{Event: cluster.EventRecover, Phase: cluster.PhaseDone, By: cluster.ByController,
			Topic: r.topic, Partition: r.partition, Broker: n.cfg.ID,
			Summary: fmt.Sprintf("%s/%d: broker %d cuts offsets %d..%d (%d records, never acknowledged) to follow leader %d at epoch %d",
				r.topic, r.partition, n.cfg.ID, common, end-1, end-common, pm.Leader, pm.LeaderEpoch),
			Quarantine: n.relative(path), Cut: &cluster.JournalCut{From: common, To: end}})
	}
	r.synced, r.syncedEpoch, r.caughtUp, r.diverged = true, pm.LeaderEpoch, false, false
	return nil
}

// pullLocked copies the leader's records past this replica's end, until it
// reaches the leader's log end (caughtUp) or ctx ends. r.fmu must be held
// and the replica synced at pm's epoch.
func (n *Node) pullLocked(ctx context.Context, r *replica, pm cluster.PartitionMetadata, l *segment.Log) error {
	addr, err := n.addrOf(pm.Leader)
	if err != nil {
		return err
	}
	for {
		end := l.NextOffset()
		res, err := n.rpc.Records(ctx, addr, replication.RecordsRequest{Topic: r.topic, Partition: r.partition, From: end, MaxBytes: maxPushBytes})
		if err != nil {
			return fmt.Errorf("clusternode: catch %s/%d up from leader %d: %w", r.topic, r.partition, pm.Leader, err)
		}
		if len(res.Records) == 0 {
			if res.LogStart > end {
				if err := n.takeLogStartLocked(r, l, res.LogStart, pm.Leader); err != nil {
					return err
				}
				continue
			}
			r.caughtUp = res.LogEnd <= end
			n.raiseHW(r, min(res.HighWatermark, end))
			return nil
		}
		if res.Records[0].Offset != end {
			return fmt.Errorf("clusternode: %s/%d: the leader sent offset %d for %d: %w", r.topic, r.partition, res.Records[0].Offset, end, errors.ErrUnsupported)
		}
		if err := l.AppendRecords(res.Records); err != nil {
			return err
		}
	}
}

// takeLogStartLocked gives this replica its leader's log start: it drops
// the segments wholly below it (segment.Log.AdvanceStart), or, when its
// log ends below it, starts again empty there (segment.Log.ResetTo). Both
// are journalled. r.fmu must be held and the replica synced.
func (n *Node) takeLogStartLocked(r *replica, l *segment.Log, start uint64, leader int) error {
	if start <= l.LogStart() {
		return nil
	}
	where := fmt.Sprintf("%s/%d", r.topic, r.partition)
	if end := l.NextOffset(); end < start {
		if err := l.ResetTo(start); err != nil {
			return fmt.Errorf("clusternode: %s: reset to leader %d's log start %d: %w", where, leader, start, err)
		}
		n.journal(cluster.JournalEntry{Event: cluster.EventCatchUp, Phase: cluster.PhaseDone, By: cluster.ByRetention,
			Topic: r.topic, Partition: r.partition, Broker: n.cfg.ID,
			Summary: fmt.Sprintf("%s: broker %d's log ended at %d, below leader %d's log start %d: reset to start there", where, n.cfg.ID, end, leader, start)})
		return nil
	}
	removed, err := l.AdvanceStart(start)
	if len(removed) > 0 {
		e := cluster.JournalEntry{Event: cluster.EventRetention, Phase: cluster.PhaseDone, By: cluster.ByRetention,
			Topic: r.topic, Partition: r.partition, Broker: n.cfg.ID, Removed: cluster.RemovedSegments(n.cfg.ID, removed),
			Summary: fmt.Sprintf("%s: broker %d follows leader %d's log start %d; deleted %s", where, n.cfg.ID, leader, start, cluster.DescribeRemoved(cluster.RemovedSegments(n.cfg.ID, removed)))}
		if err != nil {
			e.Phase, e.Error = cluster.PhaseFailed, n.relativeText(err.Error())
		}
		n.journal(e)
	}
	if err != nil {
		return fmt.Errorf("clusternode: %s: take leader %d's log start %d: %w", where, leader, start, err)
	}
	return nil
}

// journal records an entry through Raft, in the background: the journal
// says what happened, but what happened does not wait for it.
func (n *Node) journal(e cluster.JournalEntry) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		ctx, cancel := context.WithTimeout(n.ctx, 10*time.Second)
		defer cancel()
		if _, err := n.propose(ctx, cluster.MetaCommand{Op: cluster.OpJournal, Entry: &e}); err != nil {
			n.log.Error("a journal entry could not be written", "entry", e.Summary, "err", err)
		}
	}()
}

// relativeText turns the data directory's absolute paths in s into paths
// relative to it, as the journal shows files (no server path reaches a
// client through it).
func (n *Node) relativeText(s string) string {
	return strings.ReplaceAll(s, filepath.Clean(n.cfg.DataDir)+string(filepath.Separator), "")
}

// relative names a file under the data directory as the journal shows it.
func (n *Node) relative(path string) string {
	if rel, ok := cutPrefix(path, n.cfg.DataDir); ok {
		return rel
	}
	return path
}
