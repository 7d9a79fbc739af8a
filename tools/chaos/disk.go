package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// Disk is a tmpfs a node's data directory sits on, so that the suite can
// fill it: a ballast file takes every free byte (the disk is full), and
// removing it heals. Mounting needs root; without it the disk-full fault
// is skipped.
type Disk struct {
	Dir string
}

// ballastName is the file that fills the disk, beside the node's data.
const ballastName = "chaos-ballast"

// MountDisk mounts a tmpfs of sizeMB at dir (which must exist and be
// empty).
func MountDisk(dir string, sizeMB int) (*Disk, error) {
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", sizeMB), "tmpfs", dir).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("chaos: mount a tmpfs at %s: %w: %s", dir, err, out)
	}
	return &Disk{Dir: dir}, nil
}

// Fill writes the ballast until the file system refuses a byte more.
func (d *Disk) Fill() error {
	f, err := os.OpenFile(filepath.Join(d.Dir, ballastName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: ballast: %w", err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for size := len(chunk); size > 0; {
		if _, err := f.Write(chunk[:size]); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("chaos: ballast: %w", err)
			}
			size /= 2 // fill the last megabyte too
		}
	}
	return nil
}

// Heal removes the ballast.
func (d *Disk) Heal() error {
	if err := os.Remove(filepath.Join(d.Dir, ballastName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("chaos: remove ballast: %w", err)
	}
	return nil
}

// Unmount removes the ballast and unmounts the tmpfs; its contents go with
// it, so the run copies what it keeps first.
func (d *Disk) Unmount() error {
	_ = d.Heal()
	if out, err := exec.Command("umount", d.Dir).CombinedOutput(); err != nil {
		return fmt.Errorf("chaos: unmount %s: %w: %s", d.Dir, err, out)
	}
	return nil
}
