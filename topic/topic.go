package topic

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
)

// MaxPartitionCount is the largest partition count a topic may have: the
// six-digit partition directory names hold the ids 0 to 999999. A larger
// count is refused with ErrInvalidPartitionCount before anything is
// allocated or created.
const MaxPartitionCount = 1_000_000

// PartitionDir is the name of partition p's directory inside the topic
// directory: "partition-" and the id as six zero-padded digits.
func PartitionDir(p int) string {
	return fmt.Sprintf(partitionDirPrefix+"%06d", p)
}

// partitionDirPrefix starts every partition directory's name.
const partitionDirPrefix = "partition-"

// ParsePartitionDir is the inverse of PartitionDir: the partition id a
// directory name stands for, and false for any name PartitionDir does not
// produce ("partition-7", "partition-+00007", "orders").
func ParsePartitionDir(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, partitionDirPrefix)
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(digits)
	if err != nil || p < 0 || PartitionDir(p) != name {
		return 0, false
	}
	return p, true
}

// PartitionLogDir is the segmented log of partition p of the topic whose
// directory is topicDir: <topicDir>/partition-NNNNNN, a directory of
// segment files (package log/segment).
func PartitionLogDir(topicDir string, p int) string {
	return filepath.Join(topicDir, PartitionDir(p))
}

// Topic is a named set of partitions, each an independent append-only log
// with its own offsets starting at 0.
//
// A Topic is safe for concurrent use: any number of goroutines may append,
// batch-append and read at once. Records appended to one partition keep the
// order in which the partition accepted them.
type Topic struct {
	name  string
	dir   string
	parts []*segment.Log
	// maxPayload is the limit every partition log enforces.
	maxPayload int

	// router decides the partition of every record.
	router *Router

	// closeMu guards closed, so that only the first Close closes the logs.
	closeMu sync.Mutex
	closed  bool
}

// Open opens the topic name under root, creating it with partitionCount
// partitions when it does not exist yet. See OpenWithOptions.
func Open(root, name string, partitionCount int) (*Topic, error) {
	return OpenWithOptions(root, name, partitionCount, Options{})
}

// OpenWithOptions opens or creates the topic <root>/<name>.
//
// The name is validated (ValidateName) and partitionCount checked (1 to
// MaxPartitionCount) before any file is touched.
//
// When <root>/<name>/topic.meta exists, the topic is reopened: the metadata
// is read and validated first, and any problem, including a partition count
// different from partitionCount, returns a *MetadataError with nothing
// changed. Then every partition directory and log file must exist (else
// ErrMissingPartition; nothing is recreated) and each log is opened, which
// scans it and refuses a damaged one with a *log.CorruptionError. A leftover
// topic.meta.tmp from an interrupted creation is removed.
//
// Otherwise the topic is created: the partition directories and empty logs
// first, every new directory and file fsync-ed, and topic.meta last, written
// atomically. A directory without topic.meta is not a topic, so a crash at
// any point of creation leaves either no topic or a complete one; opening
// again finishes the job, reusing empty partition logs a crashed creation
// left. A partition log that already holds records while topic.meta is
// missing is refused with a *MetadataError, because adopting it could attach
// someone's records to a new topic.
func OpenWithOptions(root, name string, partitionCount int, opts Options) (*Topic, error) {
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("topic: open: %w", err)
	}
	if partitionCount < 1 || partitionCount > MaxPartitionCount {
		return nil, fmt.Errorf("topic: open %q with %d partitions: %w", name, partitionCount, ErrInvalidPartitionCount)
	}
	opts = opts.withDefaults()
	dir := filepath.Join(root, name)
	metaPath := filepath.Join(dir, MetadataFile)
	_, err := opts.FS.Stat(metaPath)
	switch {
	case err == nil:
		return reopen(dir, name, partitionCount, opts)
	case errors.Is(err, fs.ErrNotExist):
		return create(dir, name, partitionCount, opts)
	default:
		return nil, fmt.Errorf("topic: open %q: %w", name, err)
	}
}

// OpenExisting reopens the topic <root>/<name> with the partition count its
// topic.meta records, for callers (a server starting up) that do not know
// it. It creates nothing: without topic.meta it returns ErrTopicNotFound.
func OpenExisting(root, name string, opts Options) (*Topic, error) {
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("topic: open: %w", err)
	}
	opts = opts.withDefaults()
	dir := filepath.Join(root, name)
	m, err := readMetadata(opts.FS, filepath.Join(dir, MetadataFile), name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("topic: open %q in %s: %w", name, root, ErrTopicNotFound)
	}
	if err != nil {
		return nil, err
	}
	return reopen(dir, name, m.PartitionCount, opts)
}

// readMetadata reads and validates topic.meta against the expected name. A
// missing file returns an error wrapping fs.ErrNotExist; every other problem
// is a *MetadataError.
func readMetadata(fsys durable.FS, path, name string) (Metadata, error) {
	m, err := ReadMetadata(fsys, path)
	if err != nil {
		return Metadata{}, err
	}
	if m.Name != name {
		return Metadata{}, &MetadataError{Path: path, Reason: fmt.Sprintf("stored name %q, opened as %q", m.Name, name)}
	}
	return m, nil
}

// ReadMetadata reads and parses the topic.meta at path, changing nothing:
// the checks every open of a topic makes, for a tool that must judge a file
// without opening its topic (opening may create files). A missing file is
// an error wrapping fs.ErrNotExist; anything else it refuses — something
// other than a regular file, a file too large, a ParseMetadata refusal — is
// a *MetadataError naming path. Whether the stored name is the directory's
// is the caller's to check.
func ReadMetadata(fsys durable.FS, path string) (Metadata, error) {
	data, err := durable.ReadSmallFile(fsys, path, maxMetadataSize)
	if errors.Is(err, fs.ErrNotExist) {
		return Metadata{}, fmt.Errorf("topic: metadata %s: %w", path, err)
	}
	if err != nil {
		return Metadata{}, &MetadataError{Path: path, Reason: "cannot read", Err: err}
	}
	m, err := ParseMetadata(data)
	if err != nil {
		var me *MetadataError
		if errors.As(err, &me) {
			me.Path = path
		}
		return Metadata{}, err
	}
	return m, nil
}

// reopen opens an existing topic. Metadata is validated before any
// partition is looked at.
func reopen(dir, name string, partitionCount int, opts Options) (*Topic, error) {
	fsys := opts.FS
	metaPath := filepath.Join(dir, MetadataFile)
	m, err := readMetadata(fsys, metaPath, name)
	if err != nil {
		return nil, err
	}
	if m.PartitionCount != partitionCount {
		return nil, &MetadataError{Path: metaPath, Reason: fmt.Sprintf("partition_count %d, opened with %d", m.PartitionCount, partitionCount)}
	}
	// The process that created the topic may have died after renaming
	// topic.meta into place but before syncing the directory; the entry
	// must be durable before this process acknowledges anything in it.
	if err := durable.SyncDir(fsys, dir); err != nil {
		return nil, fmt.Errorf("topic: open %q: %w", name, err)
	}
	for p := range partitionCount {
		logPath := PartitionLogDir(dir, p)
		if _, err := fsys.Stat(logPath); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("topic: open %q: partition %d: %s: %w", name, p, logPath, ErrMissingPartition)
			}
			return nil, fmt.Errorf("topic: open %q: partition %d: %w", name, p, err)
		}
	}
	t, err := openPartitions(dir, name, partitionCount, opts, true)
	if err != nil {
		return nil, err
	}
	if err := durable.RemoveTemp(fsys, metaPath); err != nil {
		return nil, errors.Join(fmt.Errorf("topic: open %q: %w", name, err), t.Close())
	}
	return t, nil
}

// create makes a new topic: partitions first, topic.meta last.
func create(dir, name string, partitionCount int, opts Options) (*Topic, error) {
	fsys := opts.FS
	// segment.Open creates the partition directory (fsync-ing each new
	// directory's parent) and the empty first segment (fsync-ing its
	// directory).
	t, err := openPartitions(dir, name, partitionCount, opts, false)
	if err != nil {
		return nil, err
	}
	metaPath := filepath.Join(dir, MetadataFile)
	for p, l := range t.parts {
		if l.NextOffset() > 0 {
			err := &MetadataError{Path: metaPath, Reason: fmt.Sprintf("missing, while partition %d already holds %d records", p, l.NextOffset()), Err: fs.ErrNotExist}
			return nil, errors.Join(err, t.Close())
		}
	}
	data := encodeMetadata(Metadata{Version: MetadataVersion, Name: name, PartitionCount: partitionCount})
	if err := durable.WriteFile(fsys, metaPath, data); err != nil {
		return nil, errors.Join(fmt.Errorf("topic: create %q: %w", name, err), t.Close())
	}
	return t, nil
}

// openPartitions opens the log of every partition, creating it when missing
// unless mustExist: a partition of an existing topic whose segments are
// gone is ErrMissingPartition, never recreated empty. On failure the logs
// already opened are closed.
func openPartitions(dir, name string, partitionCount int, opts Options, mustExist bool) (*Topic, error) {
	t := &Topic{name: name, dir: dir, parts: make([]*segment.Log, 0, partitionCount), router: NewRouter(partitionCount)}
	for p := range partitionCount {
		so := opts.segmentOptions()
		so.MustExist = mustExist
		l, err := segment.Open(PartitionLogDir(dir, p), so)
		if mustExist && errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %w", ErrMissingPartition, err)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("topic: open %q: partition %d: %w", name, p, err), t.Close())
		}
		t.parts = append(t.parts, l)
		t.maxPayload = l.MaxPayloadSize()
	}
	return t, nil
}

// Name is the topic's name.
func (t *Topic) Name() string { return t.name }

// Dir is the topic's directory, <root>/<name>.
func (t *Topic) Dir() string { return t.dir }

// PartitionCount is the number of partitions, ids 0 to PartitionCount()-1.
func (t *Topic) PartitionCount() int { return len(t.parts) }

// partition returns partition p's log or an error wrapping
// ErrPartitionOutOfRange.
func (t *Topic) partition(p int) (*segment.Log, error) {
	if p < 0 || p >= len(t.parts) {
		return nil, fmt.Errorf("topic %q: partition %d of %d: %w", t.name, p, len(t.parts), ErrPartitionOutOfRange)
	}
	return t.parts[p], nil
}

// Append routes one record and appends it durably to its partition. A nil
// key takes the next partition in round-robin order; any other key, the
// empty one included, goes to PartitionForKey(key, PartitionCount()). The
// result is returned only once the record is on stable storage.
func (t *Topic) Append(key, payload []byte) (AppendResult, error) {
	p := t.router.Route(key)
	rec, err := t.parts[p].Append(payload)
	if err != nil {
		return AppendResult{}, fmt.Errorf("topic %q: append to partition %d: %w", t.name, p, err)
	}
	return AppendResult{Partition: p, Offset: rec.Offset, Record: rec}, nil
}

// LogStart is the first readable offset of one partition: 0 until records
// are deleted from its front (segment.Log.AdvanceStart). A Read below it
// fails with an error wrapping segment.ErrBeforeLogStart.
func (t *Topic) LogStart(partition int) (uint64, error) {
	l, err := t.partition(partition)
	if err != nil {
		return 0, err
	}
	return l.LogStart(), nil
}

// Read returns up to maxRecords records of one partition starting at the
// partition-local offset start. Past the end it returns no records and no
// error. Only durable records are visible.
func (t *Topic) Read(partition int, start uint64, maxRecords int) ([]log.Record, error) {
	l, err := t.partition(partition)
	if err != nil {
		return nil, err
	}
	recs, err := l.Read(start, maxRecords)
	if err != nil {
		return nil, fmt.Errorf("topic %q: read partition %d: %w", t.name, partition, err)
	}
	return recs, nil
}

// NextOffset is the offset the next record of a partition will get: the
// number of durable records it holds.
func (t *Topic) NextOffset(partition int) (uint64, error) {
	l, err := t.partition(partition)
	if err != nil {
		return 0, err
	}
	return l.NextOffset(), nil
}

// Close closes every partition log, waiting for appends in flight, and
// returns the first error. Later operations fail with an error wrapping
// log.ErrClosed. Closing twice is harmless: the second call returns nil.
func (t *Topic) Close() error {
	t.closeMu.Lock()
	defer t.closeMu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	var first error
	for _, l := range t.parts {
		if err := l.Close(); err != nil && first == nil {
			first = fmt.Errorf("topic %q: close: %w", t.name, err)
		}
	}
	return first
}
