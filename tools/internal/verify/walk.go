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
	"github.com/pystream/pystream/log/segment"
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
	// journals caches the brokers' commit journals by broker directory.
	journals map[string]*journal
	// temps are the temporary directories logs were replayed into,
	// removed when Verify returns.
	temps []string
}

// Verify checks everything under path without changing anything: a log
// directory (a partition's or replica's segments), a single log file, a
// topic directory, a broker directory or a whole data directory. Every log
// directory is scanned as one log, segment after segment; every topic.meta,
// cluster.meta, *.offset and leader-epochs file is parsed and checked;
// every quarantine file is scanned; a topic.meta's partitions must all
// exist; and every follower replica in scope is compared with its
// partition's leader as recorded in the nearest cluster.meta at or above
// path. The error is only for path itself being unreadable; everything
// found is in the report.
func Verify(path string) (Report, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Report{}, fmt.Errorf("verify: %w", err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return Report{}, fmt.Errorf("verify: %w", err)
	}
	v := &verifier{arg: path, scope: abs, logs: make(map[string]logResult), reported: make(map[string]bool), journals: make(map[string]*journal)}
	defer v.removeTemps()
	if info.IsDir() {
		err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// Every entry is judged by its name, so a directory or a
			// pipe where a metadata file belongs is reported as the
			// owning module would refuse it.
			if p != abs {
				v.checkFile(p, false)
			}
			if d.IsDir() {
				v.checkDir(p)
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

// displayLog is how the log at p is shown: a log directory's path ends in
// a separator, so that it reads as the directory it is.
func (v *verifier) displayLog(p string, r logResult) string {
	if r.dir {
		return v.display(p) + string(filepath.Separator)
	}
	return v.display(p)
}

func (v *verifier) inScope(abs string) bool {
	return abs == v.scope || strings.HasPrefix(abs, v.scope+string(filepath.Separator))
}

func (v *verifier) add(abs string, it Item) {
	it.Path = v.display(abs)
	v.items = append(v.items, it)
	v.reported[abs] = true
}

// checkDir checks a directory found in scope (or the scope itself) that
// holds a log: segment files or a legacy log.bin. The cluster journal's
// directory is not one: the journal is a single log file.
func (v *verifier) checkDir(p string) {
	if isJournalDir(p) {
		return
	}
	if d, err := ListLogDir(p); err != nil || d.IsLog() {
		v.checkLog(p, KindLog)
	}
}

// checkFile checks one file found in scope. explicit is true when it is the
// path the caller named, which is taken as a log whatever its name; a log
// file found in a directory walk is part of its directory's log.
func (v *verifier) checkFile(p string, explicit bool) {
	name := filepath.Base(p)
	_, _, _, quarantine := cluster.ParseQuarantineName(name)
	walAside, walFile := isJournalFile(p)
	switch {
	case name == cluster.MetaFileName:
		v.checkClusterMeta(p)
	case name == topic.MetadataFile:
		v.checkTopicMeta(p)
	case strings.HasSuffix(name, client.OffsetFileSuffix):
		v.checkOffset(p)
	case quarantine:
		v.checkQuarantine(p)
	case name == cluster.EpochsFileName:
		v.checkEpochs(p)
	case cluster.IsEpochsAsideName(name):
		v.checkEpochsAside(p)
	case walFile:
		if walAside {
			v.checkJournalAside(p)
		} else {
			v.checkJournal(p)
		}
	case explicit || isJournalDir(filepath.Dir(p)) && name == segment.LegacyFileName:
		v.checkLog(p, KindLog)
	}
}

// isJournalDir reports whether dir is the cluster journal's directory: it
// holds one phase-1 log file, never segments.
func isJournalDir(dir string) bool {
	root := filepath.Dir(dir)
	if dir != cluster.JournalDir(root) {
		return false
	}
	_, err := os.Stat(filepath.Join(root, cluster.MetaFileName))
	return err == nil
}

// log returns the cached scan of the log at p: a log directory or a
// single file.
func (v *verifier) log(p string) logResult {
	if r, ok := v.logs[p]; ok {
		return r
	}
	var r logResult
	if info, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		r = logResult{}
	} else {
		r = v.scanLog(p, err == nil && info.IsDir())
	}
	v.logs[p] = r
	return r
}

// addLog adds the item of the log at p: a directory's path ends in a
// separator, and damage inside it names the segment file.
func (v *verifier) addLog(p string, r logResult, it Item) {
	it.Path = v.displayLog(p, r)
	if r.dir {
		var cerr *log.CorruptionError
		if errors.As(r.err, &cerr) && cerr.Path != "" {
			it.Segment = v.display(cerr.Path)
		}
	}
	v.items = append(v.items, it)
	v.reported[p] = true
}

func (v *verifier) checkLog(p string, kind Kind) {
	r := v.log(p)
	switch {
	case !r.exists && r.dir:
		v.addLog(p, r, Item{Status: StatusMissing, Kind: kind, Detail: "log directory holds no segment file"})
	case !r.exists:
		v.addLog(p, r, Item{Status: StatusMissing, Kind: kind, Detail: "log file does not exist"})
	case r.err == nil:
		v.addLog(p, r, Item{Status: StatusOK, Kind: kind, Records: ptr(r.records), Detail: wholeLog(r)})
	default:
		v.addLog(p, r, damagedLog(kind, r))
	}
}

// checkQuarantine checks a file of records a recovery cut: a whole log
// file whose frames start at the offset its name gives and which holds as
// many records as its name says.
func (v *verifier) checkQuarantine(p string) {
	from, to, _, _ := cluster.ParseQuarantineName(filepath.Base(p))
	r := v.log(p)
	if r.exists && r.err == nil && r.records != to-from {
		v.addLog(p, r, Item{Status: StatusDamaged, Kind: KindQuarantine, Records: ptr(r.records), Detail: fmt.Sprintf("holds %d records; its name promises offsets %d..%d", r.records, from, to-1)})
		return
	}
	v.checkLog(p, KindQuarantine)
}

// wholeLog describes a log whose scan found no damage.
func wholeLog(r logResult) string {
	var detail string
	switch {
	case r.legacy:
		detail = fmt.Sprintf("%d records in a phase-1 %s (%d bytes), not yet upgraded to segments: the next open renames it to %s", r.records, segment.LegacyFileName, r.bytes, segment.SegmentFileName(0))
	case r.dir:
		detail = fmt.Sprintf("%d records in %d segments, log start %d", r.records, r.segments, r.start)
	case r.start > 0:
		detail = fmt.Sprintf("%d records (offsets from %d), %d bytes", r.records, r.start, r.bytes)
	default:
		detail = fmt.Sprintf("%d records, %d bytes", r.records, r.bytes)
	}
	for _, n := range r.notes {
		detail += "; " + n
	}
	if r.journal != "" {
		detail += "; " + r.journal
	}
	return detail
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
	if r.journal != "" {
		it.Detail += "; " + r.journal
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
		lp := topic.PartitionLogDir(dir, part)
		if r := v.log(lp); !r.exists {
			v.addLog(lp, logResult{dir: true}, Item{Status: StatusMissing, Kind: KindLog, Detail: fmt.Sprintf("partition %d of topic %q has no log", part, tm.Name)})
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

// checkEpochs judges a replica's leader-epoch history as the cluster reads
// it when it opens the replica: at most cluster.MaxEpochsFileSize bytes of
// a regular file, parsed by cluster.ParseEpochsFile. A file it refuses is
// set aside at open, so it is damage. Runs that start at or past the
// replica's log end hold nothing and are dropped at open: a note, counted
// when the log beside the file is in scope and whole.
func (v *verifier) checkEpochs(p string) {
	data, err := durable.ReadSmallFile(durable.OS, p, cluster.MaxEpochsFileSize)
	if err != nil {
		v.add(p, Item{Status: StatusDamaged, Kind: KindEpochs, Detail: "cannot read: " + err.Error()})
		return
	}
	runs, err := cluster.ParseEpochsFile(data)
	if err != nil {
		v.add(p, Item{Status: StatusDamaged, Kind: KindEpochs, Detail: err.Error()})
		return
	}
	detail := "no runs"
	if n := len(runs); n > 0 {
		last := runs[n-1]
		detail = fmt.Sprintf("%d runs, the last at epoch %d from offset %d", n, last.Epoch, last.Start)
	}
	if dir := filepath.Dir(p); v.inScope(dir) {
		if r := v.log(dir); r.exists && r.err == nil {
			past := 0
			for _, run := range runs {
				if run.Start >= r.end {
					past++
				}
			}
			if past > 0 {
				detail += fmt.Sprintf("; %d runs start at or past the log's end (%d) and are dropped at open", past, r.end)
			}
		}
	}
	v.add(p, Item{Status: StatusOK, Kind: KindEpochs, Detail: detail})
}

// checkEpochsAside reports a history the cluster set aside: it is kept for
// inspection and never read again, so it is not damage, whatever it holds.
func (v *verifier) checkEpochsAside(p string) {
	v.addKept(p, KindEpochs, "an unreadable history the server set aside at open; kept, never read again")
}

// addKept reports a file the server set aside, with its size when it is
// a regular file: kept for inspection and never read again, so not damage,
// whatever it holds.
func (v *verifier) addKept(p string, kind Kind, detail string) {
	if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
		detail += fmt.Sprintf(" (%d bytes)", info.Size())
	}
	v.add(p, Item{Status: StatusOK, Kind: kind, Detail: detail})
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
			leaderPath := cluster.ReplicaDir(root, pa.Leader, name, pa.Partition)
			for _, b := range append([]int{pa.Leader}, pa.Followers()...) {
				rp := cluster.ReplicaDir(root, b, name, pa.Partition)
				if !v.inScope(rp) {
					continue
				}
				if r := v.log(rp); !r.exists {
					v.addLog(rp, r, Item{Status: StatusMissing, Kind: KindReplica, Detail: fmt.Sprintf("broker %d holds no replica of %s partition %d", b, name, pa.Partition)})
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
			v.addLog(p, r, Item{Status: StatusMissing, Kind: KindReplica, Detail: "leader replica does not exist"})
		} else {
			v.addLog(p, r, damagedLog(KindReplica, r))
		}
	}
	return false
}

// compare judges the follower replica at followerPath against its leader's
// over the offsets both hold; both logs scanned whole already.
func (v *verifier) compare(leaderPath, followerPath string, leader int, active bool) {
	lr, fr := v.log(leaderPath), v.log(followerPath)
	var lerr, ferr error
	c := Compare(Replica{Start: lr.start, Records: records(lr.path, lr.dir, &lerr)}, Replica{Start: fr.start, Records: records(fr.path, fr.dir, &ferr)})
	if err := errors.Join(lerr, ferr); err != nil {
		v.addLog(followerPath, fr, Item{Status: StatusDamaged, Kind: KindReplica, Detail: "changed while being compared: " + err.Error()})
		return
	}
	status, lag, detail := Judge(c, leader, active)
	if fr.journal != "" {
		detail += "; " + fr.journal
	}
	if lr.journal != "" {
		detail += "; of the leader's log: " + lr.journal
	}
	it := Item{Status: status, Kind: KindReplica, Lag: lag, Records: ptr(fr.records), Detail: detail}
	if c.Mismatch {
		it.Offset = ptr(c.MismatchOffset)
	}
	if status == StatusDiverged && !c.Mismatch {
		it.Offset = ptr(c.LeaderEnd)
	}
	it.Path = v.displayLog(followerPath, fr)
	v.items = append(v.items, it)
}
