package segment

import "time"

// RetentionPolicy says how much of a log to keep (Kafka's retention.ms and
// retention.bytes).
type RetentionPolicy struct {
	// Age deletes a sealed segment once its newest record is older than
	// this; negative keeps segments for ever.
	Age time.Duration
	// Bytes deletes the oldest sealed segments while the log is larger
	// than this; negative is unlimited.
	Bytes int64
}

// PlanRetention decides, without touching a disk, how many of the oldest
// segments of segs (as Segments returns them) to delete under p at time
// now: by age, every leading segment whose MaxTimestamp is before
// now - Age; by bytes, leading segments while the total size minus the
// dropped ones exceeds Bytes; whichever drops more. It never drops the
// active segment (nor any segment after the first unsealed one), nor a
// segment holding records at or above highWatermark (Next > highWatermark),
// which a follower may still need. newStart is the Base of the first kept
// segment (segs[0].Base when drop is 0, 0 when segs is empty); the caller
// passes it to AdvanceStart.
func PlanRetention(segs []SegmentInfo, p RetentionPolicy, now time.Time, highWatermark uint64) (newStart uint64, drop int) {
	if len(segs) == 0 {
		return 0, 0
	}
	limit := 0 // how many leading segments may be dropped at all
	for limit < len(segs) && segs[limit].Sealed && segs[limit].Next <= highWatermark {
		limit++
	}
	limit = min(limit, len(segs)-1) // the last segment is the active one
	byAge := 0
	if p.Age >= 0 {
		cutoff := now.Add(-p.Age).UnixNano()
		for byAge < limit && segs[byAge].MaxTimestamp < cutoff {
			byAge++
		}
	}
	byBytes := 0
	if p.Bytes >= 0 {
		var total int64
		for _, s := range segs {
			total += s.Size
		}
		for byBytes < limit && total > p.Bytes {
			total -= segs[byBytes].Size
			byBytes++
		}
	}
	drop = max(byAge, byBytes)
	return segs[drop].Base, drop
}

// ExpiredActive reports whether retention.ms has passed for the whole log,
// the active segment included: every sealed segment is expired, and the
// active one holds records, all older than the policy's age and all below
// the high watermark. The active segment is never deleted, so such a log
// would keep its last records for ever if no one wrote again; the caller
// rolls it (Roll) and plans again, as Kafka rolls an expired active
// segment before deleting it. A pure function.
func ExpiredActive(segs []SegmentInfo, p RetentionPolicy, now time.Time, highWatermark uint64) bool {
	if len(segs) == 0 || p.Age < 0 {
		return false
	}
	active := segs[len(segs)-1]
	if active.Next == active.Base || active.Next > highWatermark || active.MaxTimestamp >= now.Add(-p.Age).UnixNano() {
		return false
	}
	_, drop := PlanRetention(segs, RetentionPolicy{Age: p.Age, Bytes: -1}, now, highWatermark)
	return drop == len(segs)-1
}
