package server

import (
	"errors"
	"fmt"
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
	file, dir, whole prometheus.Observer
}

var (
	_ durable.FS          = timedFS{}
	_ durable.WholeSyncer = timedFS{}
)

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

// CanSyncFS is the wrapped file system's answer, where it can sync as a
// whole.
func (t timedFS) CanSyncFS(f durable.File) error {
	w, f, err := t.wholeOf(f)
	if err != nil {
		return err
	}
	return w.CanSyncFS(f)
}

// SyncFS is the wrapped file system's sync of itself as a whole, timed
// as kind=filesystem, where it has one.
func (t timedFS) SyncFS(f durable.File) error {
	w, f, err := t.wholeOf(f)
	if err != nil {
		return err
	}
	start := time.Now()
	err = w.SyncFS(f)
	t.whole.Observe(time.Since(start).Seconds())
	return err
}

// wholeOf is the wrapped file system as a WholeSyncer, and f as a file of
// it; an error wrapping errors.ErrUnsupported where it cannot sync as a
// whole.
func (t timedFS) wholeOf(f durable.File) (durable.WholeSyncer, durable.File, error) {
	w, ok := t.FS.(durable.WholeSyncer)
	if !ok {
		return nil, nil, fmt.Errorf("server: syncfs %s: %w", f.Name(), errors.ErrUnsupported)
	}
	if tf, ok := f.(timedFile); ok {
		f = tf.File
	}
	return w, f, nil
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
