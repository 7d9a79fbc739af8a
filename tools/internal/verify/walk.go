package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// verifier holds the state of one Verify call. It is not safe for
// concurrent use.
type verifier struct {
	// arg is the path as the caller gave it, used to display paths.
	arg string
	// scope is the absolute path being verified.
	scope string
	// items is the report so far.
	items []Item
	// logs caches scans by absolute path.
	logs map[string]logResult
	// reported holds absolute paths that already have an item.
	reported map[string]bool
}

// Verify checks everything under path without changing anything: a single
// log file, a topic directory, a broker directory or a whole data directory.
// Every log.bin is scanned; every topic.meta, cluster.meta and *.offset file
// is parsed and checked; a topic.meta's partitions must all exist; and every
// follower replica in scope is compared with its partition's leader as
// recorded in the nearest cluster.meta at or above path. The error is only
// for path itself being unreadable; everything found is in the report.
func Verify(path string) (Report, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Report{}, fmt.Errorf("verify: %w", err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return Report{}, fmt.Errorf("verify: %w", err)
	}
	v := &verifier{arg: path, scope: abs, logs: make(map[string]logResult), reported: make(map[string]bool)}
	if info.IsDir() {
		err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// Every entry is judged by its name, so a directory or a pipe
			// where a metadata file or log belongs is reported as the
			// owning module would refuse it.
			if p != abs {
				v.checkFile(p, false)
			}
			return nil
		})
		if err != nil {
			return Report{}, fmt.Errorf("verify: %w", err)
		}
	} else {
		v.checkFile(abs, true)
	}
	v.checkCluster()
	return Report{Items: v.items}, nil
}

// display is how an absolute path is shown: relative to the path the caller
// gave.
func (v *verifier) display(abs string) string {
	rel, err := filepath.Rel(v.scope, abs)
	if err != nil {
		return abs
	}
	return filepath.Join(v.arg, rel)
}

func (v *verifier) inScope(abs string) bool {
	return abs == v.scope || strings.HasPrefix(abs, v.scope+string(filepath.Separator))
}

func (v *verifier) add(abs string, it Item) {
	it.Path = v.display(abs)
	v.items = append(v.items, it)
	v.reported[abs] = true
}

// checkFile checks one file found in scope. explicit is true when it is the
// path the caller named, which is taken as a log whatever its name.
func (v *verifier) checkFile(p string, explicit bool) {
	name := filepath.Base(p)
	switch {
	case name == cluster.MetaFileName:
		v.checkClusterMeta(p)
	case name == topic.MetadataFile:
		v.checkTopicMeta(p)
	case strings.HasSuffix(name, client.OffsetFileSuffix):
		v.checkOffset(p)
	case name == topic.LogFile || explicit:
		v.checkLog(p, KindLog)
	}
}

// log returns the cached scan of the log at p.
func (v *verifier) log(p string) logResult {
	if r, ok := v.logs[p]; ok {
		return r
	}
	var r logResult
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		r = logResult{}
	} else {
		r = scanLog(p)
	}
	v.logs[p] = r
	return r
}

func (v *verifier) checkLog(p string, kind Kind) {
	r := v.log(p)
	if !r.exists {
		v.add(p, Item{Status: StatusMissing, Kind: kind, Detail: "log file does not exist"})
		return
	}
	if r.err == nil {
		v.add(p, Item{Status: StatusOK, Kind: kind, Records: ptr(r.records), Detail: fmt.Sprintf("%d records, %d bytes", r.records, r.bytes)})
		return
	}
	v.add(p, damagedLog(kind, r))
}

// damagedLog describes a log whose scan failed.
func damagedLog(kind Kind, r logResult) Item {
	it := Item{Status: StatusDamaged, Kind: kind, Records: ptr(r.records), Detail: r.err.Error()}
	var cerr *log.CorruptionError
	if errors.As(r.err, &cerr) {
		it.Pos = ptr(cerr.Pos)
		if cerr.OffsetKnown {
			it.Offset = ptr(cerr.Offset)
		}
		it.TornTail = cerr.TornTail
		it.Detail = cerr.Reason
		if cerr.TornTail {
			it.Detail += "; torn tail: `pystream log repair` can cut it"
		}
	}
	return it
}

// checkOffset judges an offset file with the client's own parser; its name
// must be one the client writes.
func (v *verifier) checkOffset(p string) {
	off, _, err := client.ReadOffsetFile(durable.OS, p)
	if err != nil {
		v.add(p, refused(KindOffset, err))
		return
	}
	if _, ok := client.ParseOffsetFileName(filepath.Base(p)); !ok {
		v.add(p, Item{Status: StatusDamaged, Kind: KindOffset, Detail: fmt.Sprintf("offset file name is not one the client writes (%s for partition 0)", client.OffsetFileName(0))})
		return
	}
	v.add(p, Item{Status: StatusOK, Kind: KindOffset, Offset: ptr(off), Detail: fmt.Sprintf("committed offset %d", off)})
}

// checkTopicMeta judges a topic.meta with the topic's own parser, then
// checks what only the directory around it can tell: the stored name is
// the directory's, every promised partition has a log, and no partition
// directory lies beyond partition_count.
func (v *verifier) checkTopicMeta(p string) {
	dir := filepath.Dir(p)
	tm, err := topic.ReadMetadata(durable.OS, p)
	if err != nil {
		v.add(p, refused(KindTopicMeta, err))
		return
	}
	if dirName := filepath.Base(dir); tm.Name != dirName {
		v.add(p, Item{Status: StatusDamaged, Kind: KindTopicMeta, Detail: fmt.Sprintf("stored name %q is not the directory name %q", tm.Name, dirName)})
		return
	}
	v.add(p, Item{Status: StatusOK, Kind: KindTopicMeta, Detail: fmt.Sprintf("topic %q, %d partitions", tm.Name, tm.PartitionCount)})
	for part := range tm.PartitionCount {
		lp := topic.PartitionLogPath(dir, part)
		if !v.log(lp).exists {
			v.add(lp, Item{Status: StatusMissing, Kind: KindLog, Detail: fmt.Sprintf("partition %d of topic %q has no log", part, tm.Name)})
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		v.add(dir, Item{Status: StatusDamaged, Kind: KindTopicMeta, Detail: err.Error()})
		return
	}
	for _, e := range entries {
		if n, ok := topic.ParsePartitionDir(e.Name()); ok && n >= tm.PartitionCount {
			v.add(filepath.Join(dir, e.Name()), Item{Status: StatusDamaged, Kind: KindTopicMeta, Detail: fmt.Sprintf("partition %d is beyond partition_count %d", n, tm.PartitionCount)})
		}
	}
}

// refused is the item for a metadata file its owning module's parser
// refused. The typed error carries the reason; the item's path already says
// which file.
func refused(kind Kind, err error) Item {
	reason, cause := err.Error(), error(nil)
	var tme *topic.MetadataError
	var oce *client.OffsetCorruptionError
	var cme *cluster.MetadataError
	switch {
	case errors.As(err, &tme):
		reason, cause = tme.Reason, tme.Err
	case errors.As(err, &oce):
		reason, cause = oce.Reason, oce.Err
	case errors.As(err, &cme):
		reason, cause = cme.Reason, cme.Err
	}
	if cause != nil {
		reason += ": " + cause.Error()
	}
	return Item{Status: StatusDamaged, Kind: kind, Detail: reason}
}

// checkClusterMeta parses the cluster.meta at p with the cluster's own
// parser and adds an item for it unless one was added already or it is out
// of scope and healthy.
func (v *verifier) checkClusterMeta(p string) (cluster.Metadata, bool) {
	cm, _, err := cluster.ReadClusterMeta(durable.OS, p)
	if v.reported[p] {
		return cm, err == nil
	}
	if err != nil {
		v.add(p, refused(KindClusterMeta, err))
		return cm, false
	}
	if v.inScope(p) {
		v.add(p, Item{Status: StatusOK, Kind: KindClusterMeta, Detail: fmt.Sprintf("%d brokers, %d topics", len(cm.Brokers), len(cm.Topics))})
	}
	return cm, true
}

// clusterRoot finds the nearest directory at or above the scope holding a
// cluster.meta.
func (v *verifier) clusterRoot() (string, bool) {
	dir := v.scope
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		dir = filepath.Dir(dir)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, cluster.MetaFileName)); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// checkCluster compares every follower replica in scope with its leader.
func (v *verifier) checkCluster() {
	root, ok := v.clusterRoot()
	if !ok {
		return
	}
	cm, ok := v.checkClusterMeta(filepath.Join(root, cluster.MetaFileName))
	if !ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(cm.Topics)) {
		for _, pa := range cm.Topics[name].Partitions {
			leaderPath := cluster.ReplicaLogPath(root, pa.Leader, name, pa.Partition)
			for _, b := range append([]int{pa.Leader}, pa.Followers()...) {
				rp := cluster.ReplicaLogPath(root, b, name, pa.Partition)
				if !v.inScope(rp) {
					continue
				}
				if !v.log(rp).exists {
					v.add(rp, Item{Status: StatusMissing, Kind: KindReplica, Detail: fmt.Sprintf("broker %d holds no replica of %s partition %d", b, name, pa.Partition)})
					continue
				}
				if b == pa.Leader || v.log(rp).err != nil {
					continue // the log's own item says all there is
				}
				if !v.leaderUsable(leaderPath) {
					continue
				}
				v.compare(leaderPath, rp, pa.Leader, slices.Contains(pa.Active, b))
			}
		}
	}
}

// leaderUsable reports whether the leader's log can be compared with; a
// missing or damaged leader out of scope gets an item of its own.
func (v *verifier) leaderUsable(p string) bool {
	r := v.log(p)
	if r.exists && r.err == nil {
		return true
	}
	if !v.reported[p] {
		if !r.exists {
			v.add(p, Item{Status: StatusMissing, Kind: KindReplica, Detail: "leader replica does not exist"})
		} else {
			v.add(p, damagedLog(KindReplica, r))
		}
	}
	return false
}

func (v *verifier) compare(leaderPath, followerPath string, leader int, active bool) {
	var lerr, ferr error
	c := Compare(records(leaderPath, &lerr), records(followerPath, &ferr))
	if err := errors.Join(lerr, ferr); err != nil {
		v.add(followerPath, Item{Status: StatusDamaged, Kind: KindReplica, Detail: "changed while being compared: " + err.Error()})
		return
	}
	status, lag, detail := Judge(c, leader, active)
	it := Item{Status: status, Kind: KindReplica, Lag: lag, Records: ptr(c.FollowerEnd), Detail: detail}
	if c.Mismatch {
		it.Offset = ptr(c.MismatchOffset)
	}
	if status == StatusDiverged && !c.Mismatch {
		it.Offset = ptr(c.LeaderEnd)
	}
	v.items = append(v.items, withPath(it, v.display(followerPath)))
}

func withPath(it Item, p string) Item {
	it.Path = p
	return it
}
