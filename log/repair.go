package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pystream/pystream/log/durable"
)

// RepairResult says what Repair did.
type RepairResult struct {
	// Repaired is false when the log was whole and nothing was done.
	Repaired bool
	// Backup is the copy of the damaged file kept beside it.
	Backup string
	// End is the length the file was cut to: the end of the last whole
	// record.
	End int64
	// Removed is the number of bytes cut off.
	Removed int64
}

// Repair cuts a torn tail off the log file at path: the unfinished frame of
// an append that never returned. It first keeps a copy of the whole file
// beside it (log.bin.broken-<unix-ns>), then truncates the file to the end of
// its last whole record and fsyncs file and directory. Any damage other than
// a torn tail is refused with an error wrapping both ErrNotTornTail and the
// *CorruptionError, and the file is left untouched. A whole log is left as it
// is. The log must not be open while it is repaired.
func Repair(path string) (RepairResult, error) {
	return RepairWithOptions(path, Options{})
}

// RepairWithOptions is Repair on the file system of opts. It numbers the
// frames from opts.BaseOffset, so it also repairs the active segment file of
// a segmented log (package log/segment).
func RepairWithOptions(path string, opts Options) (RepairResult, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return RepairResult{}, err
	}
	fsys := opts.FS
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return RepairResult{}, fmt.Errorf("log: repair: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return RepairResult{}, fmt.Errorf("log: repair: %w", err)
	}
	_, err = scan(path, f, info.Size(), opts.BaseOffset, nil)
	if err == nil {
		return RepairResult{}, nil
	}
	var cerr *CorruptionError
	if !errors.As(err, &cerr) {
		return RepairResult{}, fmt.Errorf("log: repair: %w", err)
	}
	if !cerr.TornTail {
		return RepairResult{}, fmt.Errorf("log: repair %s: %w: %w", path, ErrNotTornTail, cerr)
	}
	backup := path + ".broken-" + strconv.FormatInt(opts.Now().UnixNano(), 10)
	if err := copyFile(fsys, f, info.Size(), backup); err != nil {
		// A partial copy is worthless and would be mistaken for a backup.
		if rerr := fsys.Remove(backup); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		return RepairResult{}, fmt.Errorf("log: repair %s: keep a copy: %w", path, err)
	}
	if err := f.Truncate(cerr.Pos); err != nil {
		return RepairResult{}, fmt.Errorf("log: repair %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return RepairResult{}, fmt.Errorf("log: repair %s: %w", path, err)
	}
	if err := durable.SyncDir(fsys, filepath.Dir(path)); err != nil {
		return RepairResult{}, fmt.Errorf("log: repair %s: %w", path, err)
	}
	return RepairResult{Repaired: true, Backup: backup, End: cerr.Pos, Removed: info.Size() - cerr.Pos}, nil
}

// copyFile durably copies size bytes of src to a new file dst.
func copyFile(fsys durable.FS, src io.ReaderAt, size int64, dst string) (err error) {
	out, err := fsys.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	buf := make([]byte, min(size, 1<<20))
	for pos := int64(0); pos < size; {
		n := min(int64(len(buf)), size-pos)
		if got, err := src.ReadAt(buf[:n], pos); int64(got) < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if _, err := out.WriteAt(buf[:n], pos); err != nil {
			return err
		}
		pos += n
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return durable.SyncDir(fsys, filepath.Dir(dst))
}
