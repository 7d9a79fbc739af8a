//go:build unix

package datalock_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/server/datalock"
)

// A server holds the data directory's lock for its life; a tool that must
// not change files beside it finds the lock taken and is told who holds it.
func Example() {
	dir, err := os.MkdirTemp("", "pystream-data")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	server, err := datalock.Acquire(durable.OS, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = datalock.AcquireExisting(dir)
	var locked *datalock.LockedError
	if errors.As(err, &locked) {
		fmt.Println("tool refused; holder is this process:", locked.PID == os.Getpid())
	}

	if err := server.Release(); err != nil {
		fmt.Println(err)
		return
	}
	tool, err := datalock.AcquireExisting(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tool.Release()
	fmt.Println("tool holds", datalock.FileName)
	// Output:
	// tool refused; holder is this process: true
	// tool holds .lock
}
