package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/pystream/pystream/log/durable"
)

// AsideSuffix marks a generation file replay kept rather than removed: it
// held bytes replay could not use (a write cut short by a crash, or
// damage), or writes to a file that no longer exists. Such a file is kept
// for whoever investigates, never replayed again.
const AsideSuffix = ".aside-"

// replay writes every entry of every generation file, oldest first, into
// the file it names, fsyncs those files, and removes the generation files
// (or sets aside one it could not use whole). It returns the newest
// generation number it saw, 0 if none.
func (j *FS) replay() (uint64, error) {
	entries, err := j.base.ReadDir(j.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var last uint64
	var gens []uint64
	for _, e := range entries {
		if g, ok := ParseGenerationFileName(e.Name()); ok {
			gens = append(gens, g)
			last = max(last, g)
		} else if g, ok := parseAsideName(e.Name()); ok {
			last = max(last, g)
		}
	}
	files := map[string]durable.File{}
	closeAll := func() error {
		var errs []error
		for _, f := range files {
			errs = append(errs, f.Close())
		}
		return errors.Join(errs...)
	}
	var aside []uint64
	for _, g := range gens {
		keep, err := j.replayGeneration(g, files)
		if err != nil {
			return 0, errors.Join(err, closeAll())
		}
		if keep {
			aside = append(aside, g)
		}
	}
	for path, f := range files {
		if err := f.Sync(); err != nil {
			return 0, errors.Join(fmt.Errorf("fsync %s after replaying the journal into it: %w", path, err), closeAll())
		}
	}
	if err := closeAll(); err != nil {
		return 0, err
	}
	for _, g := range aside {
		name := filepath.Join(j.dir, GenerationFileName(g))
		to := name + AsideSuffix + strconv.FormatInt(time.Now().UnixNano(), 10)
		if err := j.base.Rename(name, to); err != nil {
			return 0, err
		}
	}
	if len(gens) > 0 {
		for _, g := range gens {
			if !contains(aside, g) {
				if err := j.base.Remove(filepath.Join(j.dir, GenerationFileName(g))); err != nil {
					return 0, err
				}
			}
		}
		if err := j.base.SyncDir(j.dir); err != nil {
			return 0, err
		}
	}
	return last, nil
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Write is one journaled write as a generation file holds it: Data was
// written to the file at Path (relative to the journal's root, with
// slashes) at byte Pos.
type Write struct {
	Path string
	Pos  int64
	Data []byte
}

// Scan is what a generation file holds, as replay reads it.
type Scan struct {
	// Unfinished says the file holds only zeros, not even its header: a
	// creation cut short, holding no entry.
	Unfinished bool
	// Writes are its entries in order, up to the first bytes that are
	// not one. Their data aliases the scanned bytes.
	Writes []Write
	// Rest is how many bytes from RestAt on are neither an entry nor the
	// zeros a generation is filled with ahead of its entries; Err says
	// why they are not (a bad header makes the whole file Rest).
	Rest, RestAt int64
	Err          error
}

// ScanGeneration reads generation gen's file, data, as replay does: the
// one reader of the format, for replay and for whoever inspects a data
// directory.
func ScanGeneration(data []byte, gen uint64) Scan {
	if zeros(data) {
		// A creation cut short: a file system may keep a size whose data
		// never reached the disk, which reads as zeros.
		return Scan{Unfinished: true}
	}
	if err := parseHeader(data, gen); err != nil {
		return Scan{Rest: int64(len(data)), Err: err}
	}
	var sc Scan
	for at := headerSize; at < len(data); {
		if zeros(data[at:min(len(data), at+entryHead)]) && zeros(data[at:]) {
			break // the zeros a generation is filled with ahead of its entries
		}
		e, size, err := decodeEntry(data[at:])
		if err != nil {
			sc.Rest, sc.RestAt, sc.Err = int64(len(data)-at), int64(at), err
			break
		}
		sc.Writes = append(sc.Writes, Write{Path: e.path, Pos: e.pos, Data: e.data})
		at += size
	}
	return sc
}

// ReplayPlan is what replay does with one generation file.
type ReplayPlan struct {
	// Writes are the writes replay makes, in order.
	Writes []Write
	// Aside says why replay keeps the file aside rather than removes it,
	// one reason a line; none: it removes it.
	Aside []string
	// Err is a failure that stops replay, and the broker's open with it.
	Err error
}

// PlanReplay decides, as replay does, what is written of a scanned
// generation of the journal at root: the one copy of replay's rules, for
// replay and for whoever inspects a data directory. journaled is the
// journal's Options.Journaled; reach says whether the file at an absolute
// path can be written: nil, or an error (wrapping fs.ErrNotExist,
// syscall.EISDIR or syscall.ENOTDIR for a file that is gone or is not a
// file, which replay skips).
//
// A write to a path journaled refuses ends the plan: that write and what
// follows are not made. A write to a file that is gone or is not a file
// is skipped. Either, and bytes after the last entry that are not one,
// keep the file aside.
func PlanReplay(sc Scan, root string, journaled func(path string) bool, reach func(path string) error) ReplayPlan {
	var p ReplayPlan
	for n, w := range sc.Writes {
		abs := filepath.Join(root, filepath.FromSlash(w.Path))
		if journaled == nil || !journaled(abs) {
			p.Aside = append(p.Aside, fmt.Sprintf("entry %d names %s, which is not a journaled file: it and what follows are not replayed", n, w.Path))
			return p
		}
		err := reach(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			p.Aside = append(p.Aside, fmt.Sprintf("entry %d writes to %s, which no longer exists: skipped", n, w.Path))
			continue
		case errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR):
			p.Aside = append(p.Aside, fmt.Sprintf("entry %d writes to %s, which is not a file (%v): skipped", n, w.Path, err))
			continue
		case err != nil:
			p.Err = fmt.Errorf("entry %d writes to %s: %w", n, w.Path, err)
			return p
		}
		p.Writes = append(p.Writes, w)
	}
	if sc.Err != nil {
		p.Aside = append(p.Aside, fmt.Sprintf("the %d bytes from byte %d are not an entry (%v): a write cut short by a crash, or damage", sc.Rest, sc.RestAt, sc.Err))
	}
	return p
}

// replayGeneration writes generation g's entries into their files, opened
// once each and kept in files. keep says the generation file must be set
// aside rather than removed.
func (j *FS) replayGeneration(g uint64, files map[string]durable.File) (keep bool, err error) {
	name := filepath.Join(j.dir, GenerationFileName(g))
	data, err := durable.ReadFile(j.base, name)
	if err != nil {
		return false, err
	}
	sc := ScanGeneration(data, g)
	if sc.Unfinished {
		j.logf("wal: %s: %d bytes of zeros, no header: a generation whose creation was cut short, holding no entry; removed", name, len(data))
		return false, nil
	}
	plan := PlanReplay(sc, j.root, j.opts.Journaled, func(abs string) error {
		if _, ok := files[abs]; ok {
			return nil
		}
		f, err := j.base.OpenFile(abs, os.O_RDWR, 0)
		if err == nil {
			files[abs] = f
		}
		return err
	})
	if plan.Err != nil {
		return false, fmt.Errorf("replay %s: %w", name, plan.Err)
	}
	for n, w := range plan.Writes {
		abs := filepath.Join(j.root, filepath.FromSlash(w.Path))
		if _, err := files[abs].WriteAt(w.Data, w.Pos); err != nil {
			return false, fmt.Errorf("replay %s: write %d of %d: %d bytes to %s at byte %d: %w", name, n+1, len(plan.Writes), len(w.Data), w.Path, w.Pos, err)
		}
	}
	for _, why := range plan.Aside {
		j.logf("wal: %s: %s; the file is kept", name, why)
	}
	return len(plan.Aside) > 0, nil
}

func (j *FS) logf(format string, args ...any) {
	if j.opts.Logf != nil {
		j.opts.Logf(format, args...)
	}
}

// parseAsideName reads the generation number of a file replay set aside.
func parseAsideName(name string) (uint64, bool) {
	i := len(GenerationFileName(0))
	if len(name) <= i || name[i:min(len(name), i+len(AsideSuffix))] != AsideSuffix {
		return 0, false
	}
	return ParseGenerationFileName(name[:i])
}

// zeros reports whether b holds only zero bytes.
func zeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
