package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
)

// This file serves what other brokers read of a hosted broker's replicas
// (Transport.Records, Digests, Cut): a follower's proof and pull, a
// comparison of two replicas, a consumer's read forwarded to the leader.

// maxPushBytes bounds the records of one request between brokers.
const maxPushBytes = 1 << 20

// Records reads a replica that broker to, hosted here, holds (what
// Transport.Records carries). A committed read is served by the
// partition's leader alone (*NotLeaderError elsewhere), below its high
// watermark, and below its log start not at all
// (*client.OffsetOutOfRangeError); any other read is served up to the
// replica's log end, and from below its log start with no records.
func (c *Cluster) Records(ctx context.Context, to int, req RecordsRequest) (RecordsResponse, error) {
	m, err := c.hosted(to)
	if err != nil {
		return RecordsResponse{}, err
	}
	if req.Committed {
		return c.readCommittedAt(m, req)
	}
	l, err := m.b.replica(req.Topic, req.Partition, false)
	if err != nil {
		return RecordsResponse{}, err
	}
	res := RecordsResponse{LogStart: l.LogStart(), LogEnd: l.NextOffset(), HighWatermark: m.replica(replicaKey{req.Topic, req.Partition}).hw.Load()}
	if req.Runs {
		h, err := m.b.epochsOf(req.Topic, req.Partition)
		if err != nil {
			return RecordsResponse{}, err
		}
		res.Runs = h.snapshot()
	}
	if req.From >= res.LogEnd || req.MaxBytes <= 0 || req.From < res.LogStart {
		return res, nil
	}
	res.Records, err = readRange(l, req.From, res.LogEnd, req.MaxBytes, req.MaxRecords)
	if errors.Is(err, segment.ErrBeforeLogStart) { // retention ran meanwhile
		return RecordsResponse{LogStart: l.LogStart(), LogEnd: l.NextOffset()}, nil
	}
	return res, err
}

// readRange reads l's records [from, upto), at most maxBytes of frames
// (at least one record) and, when maxRecords is positive, at most that
// many.
func readRange(l *segment.Log, from, upto uint64, maxBytes, maxRecords int) ([]log.Record, error) {
	if maxRecords <= 0 {
		maxRecords = math.MaxInt
	}
	var out []log.Record
	size := 0
	for at := from; at < upto && len(out) < maxRecords && (size < maxBytes || len(out) == 0); {
		n := min(upto-at, uint64(compareChunk), uint64(maxRecords-len(out)))
		recs, err := l.Read(at, int(n))
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("cluster: %s ends at %d, before %d", l.Dir(), at, upto)
		}
		for _, rec := range recs {
			if len(out) > 0 && size+log.FrameSize(len(rec.Payload)) > maxBytes {
				return out, nil
			}
			out = append(out, rec)
			size += log.FrameSize(len(rec.Payload))
		}
		at += uint64(len(recs))
	}
	return out, nil
}

// Digests summarises a replica broker to, hosted here, holds (what
// Transport.Digests carries): one Digest per chunk of req.Chunk records
// from req.From, up to req.To or the log's end. A From below the log start
// is an error wrapping segment.ErrBeforeLogStart.
func (c *Cluster) Digests(ctx context.Context, to int, req DigestsRequest) (DigestsResponse, error) {
	m, err := c.hosted(to)
	if err != nil {
		return DigestsResponse{}, err
	}
	if req.Chunk < 1 {
		return DigestsResponse{}, fmt.Errorf("cluster: digests of %s/%d: chunk %d: %w", req.Topic, req.Partition, req.Chunk, ErrInvalidArgument)
	}
	l, err := m.b.replica(req.Topic, req.Partition, false)
	if err != nil {
		return DigestsResponse{}, err
	}
	var res DigestsResponse
	upto := min(req.To, l.NextOffset())
	for at := req.From; at < upto; {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		n := min(uint64(req.Chunk), upto-at)
		recs, err := l.Read(at, int(n))
		if err != nil {
			return res, err
		}
		if uint64(len(recs)) != n {
			return res, fmt.Errorf("cluster: digests of %s/%d at offset %d: short read (%d of %d records)", req.Topic, req.Partition, at, len(recs), n)
		}
		res.Digests = append(res.Digests, DigestRecords(recs))
		at += n
	}
	return res, nil
}

// Cut truncates a replica broker to, hosted here, holds, at its leader's
// request (what Transport.Cut carries): the leader must lead the partition
// at req.Epoch. With req.Quarantine the records cut are first kept in a
// quarantine file (Broker.CutReplica). The replica counts as proven a
// prefix of its leader at that epoch afterwards: the leader compared the
// two before it asked.
func (c *Cluster) Cut(ctx context.Context, to int, req CutRequest) (CutResponse, error) {
	m, err := c.hosted(to)
	if err != nil {
		return CutResponse{}, err
	}
	pm, err := c.partitionAtEpoch(ctx, req.Topic, req.Partition, req.Epoch)
	if err != nil {
		return CutResponse{}, err
	}
	if pm.Leader != req.Leader || pm.Leader == m.id() {
		return CutResponse{}, &StaleEpochError{Topic: req.Topic, Partition: req.Partition, Epoch: pm.LeaderEpoch, Asked: req.Epoch,
			Reason: fmt.Sprintf("broker %d leads epoch %d, not broker %d", pm.Leader, pm.LeaderEpoch, req.Leader)}
	}
	k := replicaKey{req.Topic, req.Partition}
	r := m.replica(k)
	r.fmu.Lock()
	defer r.fmu.Unlock()
	l, err := m.b.replica(req.Topic, req.Partition, false)
	if err != nil {
		return CutResponse{}, err
	}
	res := CutResponse{From: req.To, To: max(req.To, l.NextOffset())}
	switch {
	case req.To >= l.NextOffset():
	case req.Quarantine:
		path, err := m.b.CutReplica(req.Topic, req.Partition, req.To, req.At)
		res.Path, res.Quarantine = path, c.relative(path)
		if err != nil {
			return res, err
		}
	default:
		if err := m.b.truncateReplica(req.Topic, req.Partition, req.To); err != nil {
			return res, err
		}
	}
	r.synced, r.syncedEpoch = true, pm.LeaderEpoch
	r.hw.Lower(req.To)
	return res, nil
}
