package datalock

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// maxPIDBytes is more than the longest pid a lock file holds (a decimal
// int64 and a newline); a longer file is not a pid.
const maxPIDBytes = 32

// ReadPID returns the process id written in the lock file at path, or 0
// when the file is missing, unreadable or holds no pid. The pid only
// decorates messages, so reading it is best effort.
func ReadPID(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	return readPID(f)
}

// readPID reads the pid written in the open lock file f, or 0.
func readPID(f *os.File) int {
	buf := make([]byte, maxPIDBytes+1)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return 0
	}
	if n > maxPIDBytes {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// writePID replaces the content of the locked file f with pid and a
// newline, in place (truncate, write, sync), while the lock is held.
func writePID(f *os.File, pid int) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0); err != nil {
		return err
	}
	return f.Sync()
}
