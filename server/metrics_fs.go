package server

import (
	"io/fs"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/log/durable"
)

// timedFS is the storage's file system with every fsync timed: it wraps
// durable.OS through the FS seam the libraries already take, so measuring
// fsync latency changes nothing in how they write. Observing a histogram is
// an atomic add.
type timedFS struct {
	durable.FS
	file, dir prometheus.Observer
}

var _ durable.FS = timedFS{}

func (t timedFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	f, err := t.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return timedFile{File: f, obs: t.file}, nil
}

func (t timedFS) SyncDir(dir string) error {
	start := time.Now()
	err := t.FS.SyncDir(dir)
	t.dir.Observe(time.Since(start).Seconds())
	return err
}

// timedFile times Sync, the data fsync of a log append or metadata write.
type timedFile struct {
	durable.File
	obs prometheus.Observer
}

func (f timedFile) Sync() error {
	start := time.Now()
	err := f.File.Sync()
	f.obs.Observe(time.Since(start).Seconds())
	return err
}
