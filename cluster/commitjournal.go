package cluster

import (
	"path/filepath"
	"strings"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/log/wal"
)

// openJournal replays the broker's commit journal and, when its options
// ask for one, routes its files through it: every segment file of its
// replicas is journaled (docs/design.md § The commit journal).
func (b *Broker) openJournal() error {
	opts := wal.Options{Logf: b.opts.Logf, Journaled: func(path string) bool { return JournaledFile(b.dir, path) }}
	if !b.opts.Journal {
		// A journal left by an earlier run with one is replayed all the
		// same, before any replica is opened.
		return wal.Replay(b.opts.FS, b.dir, opts)
	}
	j, err := wal.Open(b.opts.FS, b.dir, opts)
	if err != nil {
		return err
	}
	b.journal = j
	b.opts.FS = j
	b.opts.Sync = durable.File.Sync
	return nil
}

// closeJournal closes the journal once the logs are closed: their files
// are fsync-ed and the journal removed, unless it broke (then the next
// open replays it).
func (b *Broker) closeJournal() error {
	if b.journal == nil {
		return nil
	}
	return b.journal.Close()
}

// JournaledFile reports whether the file at path goes through the commit
// journal of the broker whose directory is brokerDir: a segment file of
// one of its replicas (docs/design.md § The commit journal).
func JournaledFile(brokerDir, path string) bool {
	_, ok := segment.ParseSegmentFileName(filepath.Base(path))
	return ok && strings.HasPrefix(path, filepath.Join(brokerDir, brokerTopicsDir)+string(filepath.Separator))
}
