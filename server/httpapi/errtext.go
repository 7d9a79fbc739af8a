package httpapi

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/wal"
)

// This file turns what the libraries report into sentences a client
// reads: which topic, partition, broker or offset, and what happened. It
// never copies a library's error chain or a server-side path into them;
// those go to the server log (see observe). Everything here is a pure
// function of its arguments.

// dataFile is a file of the data directory, named as an operator thinks of
// it. The layout it reads is the cluster's:
//
//	cluster.meta                                            the cluster metadata
//	journal/log.bin                                         the cluster journal
//	broker-000001/topics/<topic>/partition-000000/          a replica log
//	    00000000000000000000.log, .index, ...               (its segments)
//	broker-000001/topics/<topic>/partition-000000/quarantine-*.bin
//	offsets/<consumer>/<topic>/partition-000000.offset      a committed offset
type dataFile struct {
	kind      fileKind
	broker    int
	topic     string
	partition int
	consumer  string
}

type fileKind int

const (
	fileOther fileKind = iota
	fileDataDir
	fileClusterMeta
	fileJournal
	fileLock
	fileBrokerDir
	fileCommitJournal // a generation file of a broker's commit journal (log/wal)
	fileReplicaLog
	fileReplicaOther // a quarantine file, a broken copy
	fileTopicMeta
	fileOffset
)

var (
	brokerDirName    = regexp.MustCompile(`^broker-(\d{6})$`)
	partitionDirName = regexp.MustCompile(`^partition-(\d{6})$`)
	offsetFileName   = regexp.MustCompile(`^partition-(\d{6})\.offset$`)
	// segmentFileName matches a segment of a replica log and its sidecar.
	segmentFileName = regexp.MustCompile(`^\d{20}\.(log|index)$`)
)

// parseDataFile reads what path names from its last components, so it
// works on an absolute path without knowing the data directory. A path it
// does not recognise is fileOther.
func parseDataFile(path string) dataFile {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	n := len(parts)
	at := func(i int) string { // i-th component from the end, 1-based
		if i > n {
			return ""
		}
		return parts[n-i]
	}
	num := func(re *regexp.Regexp, s string) (int, bool) {
		m := re.FindStringSubmatch(s)
		if m == nil {
			return 0, false
		}
		v, err := strconv.Atoi(m[1])
		return v, err == nil
	}
	base := at(1)
	// A replica's files: broker-N/topics/<topic>/partition-P/<file>.
	if b, ok := num(brokerDirName, at(5)); ok && at(4) == "topics" {
		if p, ok := num(partitionDirName, at(2)); ok {
			kind := fileReplicaOther
			if segmentFileName.MatchString(base) || base == log.FileName {
				kind = fileReplicaLog
			}
			return dataFile{kind: kind, broker: b, topic: at(3), partition: p}
		}
	}
	if b, ok := num(brokerDirName, at(3)); ok && at(2) == wal.DirName {
		if _, gen := wal.ParseGenerationFileName(base); gen {
			return dataFile{kind: fileCommitJournal, broker: b}
		}
	}
	if b, ok := num(brokerDirName, at(4)); ok && at(3) == "topics" && base == "topic.meta" {
		return dataFile{kind: fileTopicMeta, broker: b, topic: at(2)}
	}
	if p, ok := num(offsetFileName, base); ok && at(4) == "offsets" {
		return dataFile{kind: fileOffset, consumer: at(3), topic: at(2), partition: p}
	}
	switch {
	case base == log.FileName && at(2) == "journal":
		return dataFile{kind: fileJournal}
	case strings.HasPrefix(base, cluster.MetaFileName):
		return dataFile{kind: fileClusterMeta}
	case base == ".lock":
		return dataFile{kind: fileLock}
	}
	for i := 1; i <= n; i++ {
		if b, ok := num(brokerDirName, at(i)); ok {
			return dataFile{kind: fileBrokerDir, broker: b}
		}
	}
	return dataFile{kind: fileOther}
}

// String names the file for a client: "orders/0: broker 1's replica log",
// "the cluster journal". It starts with the partition when there is one,
// as every message about a partition does.
func (f dataFile) String() string {
	switch f.kind {
	case fileDataDir:
		return "the data directory"
	case fileClusterMeta:
		return "the cluster metadata (" + cluster.MetaFileName + ")"
	case fileJournal:
		return "the cluster journal"
	case fileLock:
		return "the data directory's lock file"
	case fileBrokerDir:
		return fmt.Sprintf("broker %d's directory", f.broker)
	case fileCommitJournal:
		return fmt.Sprintf("broker %d's commit journal", f.broker)
	case fileReplicaLog:
		return fmt.Sprintf("%s/%d: broker %d's replica log", f.topic, f.partition, f.broker)
	case fileReplicaOther:
		return fmt.Sprintf("%s/%d: a file beside broker %d's replica log", f.topic, f.partition, f.broker)
	case fileTopicMeta:
		return fmt.Sprintf("topic %s: broker %d's topic.meta", f.topic, f.broker)
	case fileOffset:
		return fmt.Sprintf("consumer %s's committed offset of %s/%d", f.consumer, f.topic, f.partition)
	}
	return "a file of the data directory"
}

// fileOp names a file-system operation of an *fs.PathError.
func fileOp(op string) string {
	switch op {
	case "fdatasync", "fsync", "sync":
		return "fsync"
	case "syncdir":
		return "directory fsync"
	case "mkdir":
		return "creating a directory"
	}
	return op
}

// causeOf says in a few words what went wrong underneath err, for the end
// of a message: "the broker is stopped", "fsync failed: no space left on
// device". It is "" when err holds nothing it knows.
func causeOf(err error) string {
	var (
		corrupt *log.CorruptionError
		pe      *fs.PathError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, cluster.ErrBrokerUnavailable), errors.Is(err, log.ErrClosed):
		return "the broker is stopped"
	case errors.Is(err, log.ErrFailed):
		s := "it refuses writes since an earlier write failed"
		if first := ioFailure(err); first != "" {
			s += " (" + first + ")"
		}
		return s
	case errors.As(err, &corrupt):
		return corruption(corrupt)
	case errors.Is(err, cluster.ErrReplicaMissing):
		return "its log file is missing"
	case errors.Is(err, log.ErrOffsetMismatch):
		return "its log does not end where the leader's did"
	case errors.As(err, &pe):
		return ioFailure(err)
	}
	return ""
}

// ioFailure says which file-system operation failed and, for an error of
// the operating system, why: "fsync failed: no space left on device".
func ioFailure(err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return ""
	}
	s := fileOp(pe.Op) + " failed"
	var errno syscall.Errno
	if errors.As(pe.Err, &errno) {
		s += ": " + errno.Error()
	}
	return s
}

// corruption describes a damaged log without its path.
func corruption(e *log.CorruptionError) string {
	kind := "damaged"
	if e.TornTail {
		kind = "cut short (a torn tail)"
	}
	s := fmt.Sprintf("%s at byte %d", kind, e.Pos)
	if e.OffsetKnown {
		s += fmt.Sprintf(" (offset %d)", e.Offset)
	}
	if r := tidy(e.Reason); r != "" {
		s += ": " + r
	}
	return s
}

// fileFailure is the message of an error that comes down to one file of
// the data directory (a damaged log, a failed fsync), or "" when err names
// no file.
func fileFailure(err error) string {
	var (
		corrupt *log.CorruptionError
		pe      *fs.PathError
		f       dataFile
	)
	switch {
	case errors.As(err, &corrupt):
		f = parseDataFile(corrupt.Path)
	case errors.As(err, &pe):
		f = parseDataFile(pe.Path)
	default:
		return ""
	}
	if errors.Is(err, log.ErrFailed) {
		s := f.String() + " refuses writes since an earlier write failed"
		if first := ioFailure(err); first != "" {
			s += " (" + first + ")"
		}
		if f.kind == fileReplicaLog || f.kind == fileCommitJournal {
			s += fmt.Sprintf("; stop and start broker %d to reopen it", f.broker)
		}
		return s
	}
	if corrupt != nil {
		return f.String() + " is " + corruption(corrupt)
	}
	return f.String() + ": " + ioFailure(err)
}

// through is err's text up to the end of sentinel's, the first time it
// says it: what err wraps beneath sentinel is left out.
func through(err, sentinel error) string {
	s, cut := err.Error(), sentinel.Error()
	if i := strings.Index(s, cut); i >= 0 {
		return s[:i+len(cut)]
	}
	return s
}

// packages are the prefixes of the libraries' error strings.
var packages = map[string]bool{
	"cluster": true, "log": true, "topic": true, "client": true,
	"durable": true, "server": true, "logtest": true,
	"clusternode": true, "raftmeta": true, "replication": true, "group": true,
}

// tidy renders a library's error text for a client: package prefixes
// dropped ("cluster: ", "log: "), a part repeated down the chain said once
// (`cluster: topic "nope": cluster: unknown topic` reads `topic "nope":
// unknown topic`; "catch up orders/0 on broker 1: broker 1: ..." reads
// "catch up orders/0 on broker 1: ..."), and every absolute path replaced
// by the name of what it is ("orders/0: broker 1's replica log").
func tidy(s string) string {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ": ") {
		part = strings.TrimSpace(withoutPaths(part))
		if part == "" || packages[part] || seen[part] {
			continue
		}
		if n := len(out); n > 0 && strings.HasSuffix(out[n-1], " "+part) {
			continue // the previous part ended saying it
		}
		seen[part] = true
		out = append(out, part)
	}
	return strings.Join(out, ": ")
}

// absPath finds absolute paths in a text: a separator at the start or
// after a space, quote or parenthesis, up to the next space, quote, colon,
// comma or closing parenthesis.
var absPath = regexp.MustCompile(`(^|[\s"'(=])(/[^\s"':,)]+)`)

// withoutPaths replaces every absolute path in s by the name of the file
// it is. Only for library text: a URL path in a handler's own message
// ("no endpoint GET /nope") would be replaced too.
func withoutPaths(s string) string {
	if !strings.Contains(s, "/") {
		return s
	}
	return absPath.ReplaceAllStringFunc(s, func(m string) string {
		lead := ""
		if len(m) > 0 && m[0] != '/' {
			lead, m = m[:1], m[1:]
		}
		return lead + parseDataFile(m).String()
	})
}

// rewritePaths rewrites every path under the data directory root in msg,
// and root itself, with name(rel), rel being the path relative to root
// ("" for root itself). A path ends at white space, a quote, a colon, a
// comma or a closing parenthesis. It is the one place that knows how a
// path of the data directory looks in a text: relativePaths (the journal's
// entries) and scrubPaths (every error answer) are built on it.
func rewritePaths(msg, root string, name func(rel string) string) string {
	if root == "" || !strings.Contains(msg, root) {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, root)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		msg = msg[i+len(root):]
		end := strings.IndexAny(msg, " \t\n\"':,)")
		if end < 0 {
			end = len(msg)
		}
		rest := msg[:end]
		if rest != "" && rest[0] != filepath.Separator {
			// A longer name that only starts like root
			// (/data-old for /data): not ours.
			b.WriteString(root)
			continue
		}
		b.WriteString(name(strings.TrimPrefix(rest, string(filepath.Separator))))
		msg = msg[end:]
	}
}

// scrubPaths names every file of the data directory in msg as what it is
// and the data directory itself as such: the last guard of every error
// answer, whatever built its message.
func scrubPaths(msg, root string) string {
	return rewritePaths(msg, root, func(rel string) string {
		if rel == "" {
			return dataFile{kind: fileDataDir}.String()
		}
		return parseDataFile(rel).String()
	})
}

// joinIDs writes broker ids for a sentence: "2", "2 and 3", "1, 2 and 3".
func joinIDs(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// recordRange writes "record 5" or "records 5..7".
func recordRange(first uint64, count int) string {
	if count <= 1 {
		return fmt.Sprintf("record %d", first)
	}
	return fmt.Sprintf("records %d..%d", first, first+uint64(count)-1)
}

// noSpace is the answer for a write that met a full disk (ENOSPC or
// EDQUOT, durable.NoSpace): 507 insufficient_storage naming the broker
// whose disk it is (or the data directory's file), never a path:
//
//	orders/0: broker 2's replica did not take records 5..7: its disk is
//	full (no space left on device); not acknowledged
//
// The broker is up: a follower's full disk is not "unavailable". The file
// that failed refuses writes until it is reopened
// (docs/design.md § Sticky failure), which the message says how to do.
func noSpace(err error) *apiError {
	var (
		re *cluster.ReplicationError
		pe *fs.PathError
	)
	why := "no space left on device"
	var errno syscall.Errno
	if errors.As(err, &errno) {
		why = errno.Error()
	}
	e := newAPIError(http.StatusInsufficientStorage, CodeInsufficientStorage, "")
	switch {
	case errors.Is(err, cluster.ErrMetadataFailed):
		e.body.Message = fmt.Sprintf("%s: a write met a full disk (%s) and the file's content is in doubt; restart the server to reopen the cluster", dataFile{kind: fileClusterMeta}, why)
		return e
	case errors.As(err, &re):
		who := fmt.Sprintf("broker %d's replica", re.BrokerIDs[0])
		if len(re.BrokerIDs) > 1 {
			who = "brokers " + joinIDs(re.BrokerIDs)
		}
		e.body.Message = fmt.Sprintf("%s/%d: %s did not take %s: the disk is full (%s); not acknowledged: the leader holds them, and once space returns a catch-up reopens the follower and copies them",
			re.Topic, re.Partition, who, recordRange(re.Offset, re.Count), why)
		e.body.BrokerIDs = slices.Clone(re.BrokerIDs)
		return e
	case errors.As(err, &pe):
		// A full disk usually fails the temp file of a replacement.
		f := parseDataFile(strings.TrimSuffix(pe.Path, durable.TempSuffix))
		e.body.Message = fmt.Sprintf("%s: the disk is full (%s); nothing was acknowledged", f, why)
		switch f.kind {
		case fileReplicaLog, fileReplicaOther, fileTopicMeta, fileBrokerDir, fileCommitJournal:
			e.body.Message = fmt.Sprintf("%s: broker %d's disk is full (%s); nothing was acknowledged", f, f.broker, why)
			if f.kind == fileBrokerDir {
				e.body.Message = fmt.Sprintf("broker %d's disk is full (%s); nothing was acknowledged", f.broker, why)
			}
			e.body.BrokerIDs = []int{f.broker}
			if f.kind == fileReplicaLog || f.kind == fileCommitJournal {
				e.body.Message += fmt.Sprintf("; once space returns, reopen broker %d's failed logs (stop and start it)", f.broker)
			}
		case fileJournal:
			e.body.Message += "; once space returns, the next journaled operation reopens the journal"
		case fileOffset:
			e.body.Message += fmt.Sprintf("; consumer %s's commits are refused until the offset store is reopened (a server restart); other consumers' are not", f.consumer)
		}
		return e
	}
	e.body.Message = fmt.Sprintf("a write met a full disk (%s); nothing was acknowledged; the server log has the details", why)
	return e
}
