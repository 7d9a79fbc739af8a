package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pystream/pystream/log"
)

// File names of the layouts in docs/design.md § Data directory layout.
const (
	logFileName     = "log.bin"
	topicMetaName   = "topic.meta"
	clusterMetaName = "cluster.meta"
	offsetSuffix    = ".offset"
)

var partitionDirRe = regexp.MustCompile(`^partition-([0-9]{6})$`)

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
			if d.Type().IsRegular() {
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
	case name == clusterMetaName:
		v.checkClusterMeta(p)
	case name == topicMetaName:
		v.checkTopicMeta(p)
	case strings.HasSuffix(name, offsetSuffix):
		v.checkOffset(p)
	case name == logFileName || explicit:
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

func (v *verifier) checkOffset(p string) {
	data, err := os.ReadFile(p)
	if err == nil {
		var off uint64
		if off, err = ParseOffset(data); err == nil {
			if !partitionFileRe.MatchString(filepath.Base(p)) {
				v.add(p, Item{Status: StatusDamaged, Kind: KindOffset, Detail: "offset file name is not partition-NNNNNN.offset"})
				return
			}
			v.add(p, Item{Status: StatusOK, Kind: KindOffset, Offset: ptr(off), Detail: fmt.Sprintf("committed offset %d", off)})
			return
		}
	}
	v.add(p, Item{Status: StatusDamaged, Kind: KindOffset, Detail: err.Error()})
}

var partitionFileRe = regexp.MustCompile(`^partition-[0-9]{6}\.offset$`)

func (v *verifier) checkTopicMeta(p string) {
	dir := filepath.Dir(p)
	data, err := os.ReadFile(p)
	if err != nil {
		v.add(p, Item{Status: StatusDamaged, Kind: KindTopicMeta, Detail: err.Error()})
		return
	}
	tm, err := ParseTopicMeta(data, filepath.Base(dir))
	if err != nil {
		v.add(p, Item{Status: StatusDamaged, Kind: KindTopicMeta, Detail: err.Error()})
		return
	}
	v.add(p, Item{Status: StatusOK, Kind: KindTopicMeta, Detail: fmt.Sprintf("topic %q, %d partitions", tm.Name, tm.PartitionCount)})
	for part := range tm.PartitionCount {
		lp := filepath.Join(dir, partitionDir(part), logFileName)
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
		m := partitionDirRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n >= tm.PartitionCount {
			v.add(filepath.Join(dir, e.Name()), Item{Status: StatusDamaged, Kind: KindTopicMeta, Detail: fmt.Sprintf("partition %d is beyond partition_count %d", n, tm.PartitionCount)})
		}
	}
}

func partitionDir(p int) string { return fmt.Sprintf("partition-%06d", p) }

func brokerDir(id int) string { return fmt.Sprintf("broker-%06d", id) }

// clusterMeta parses the cluster.meta at p and adds an item for it unless
// one was added already or it is out of scope and healthy.
func (v *verifier) checkClusterMeta(p string) (ClusterMeta, bool) {
	data, err := os.ReadFile(p)
	var cm ClusterMeta
	if err == nil {
		cm, err = ParseClusterMeta(data)
	}
	if v.reported[p] {
		return cm, err == nil
	}
	if err != nil {
		v.add(p, Item{Status: StatusDamaged, Kind: KindClusterMeta, Detail: err.Error()})
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
		if _, err := os.Stat(filepath.Join(dir, clusterMetaName)); err == nil {
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
	cm, ok := v.checkClusterMeta(filepath.Join(root, clusterMetaName))
	if !ok {
		return
	}
	names := make([]string, 0, len(cm.Topics))
	for name := range cm.Topics {
		names = append(names, name)
	}
	slices.Sort(names)
	replicaPath := func(broker int, topicName string, part int) string {
		return filepath.Join(root, brokerDir(broker), "topics", topicName, partitionDir(part), logFileName)
	}
	for _, name := range names {
		for _, pa := range cm.Topics[name].Partitions {
			leaderPath := replicaPath(pa.Leader, name, pa.Partition)
			for _, b := range pa.Replicas() {
				rp := replicaPath(b, name, pa.Partition)
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
				v.compare(leaderPath, rp, pa.Leader, pa.IsActive(b))
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
