package wal_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/wal"
)

// Example opens a journal under a broker's directory, appends to two logs
// through it (each append's fsync is a commit to the journal), closes
// both, and reads the records back through a journal opened again.
func Example() {
	root, err := os.MkdirTemp("", "wal-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	opts := wal.Options{Journaled: func(path string) bool { return filepath.Base(path) == log.FileName }}

	j, err := wal.Open(durable.OS, root, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []string{"orders-0", "orders-1"} {
		l, err := log.OpenWithOptions(filepath.Join(root, p, log.FileName), log.Options{FS: j})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, s := range []string{"first", "second"} {
			if _, err := l.Append([]byte(p + " " + s)); err != nil {
				fmt.Println(err)
				return
			}
		}
		if err := l.Close(); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := j.Close(); err != nil {
		fmt.Println(err)
		return
	}
	left, err := os.ReadDir(filepath.Join(root, wal.DirName))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("generation files after Close:", len(left))

	j, err = wal.Open(durable.OS, root, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer j.Close()
	for _, p := range []string{"orders-0", "orders-1"} {
		l, err := log.OpenWithOptions(filepath.Join(root, p, log.FileName), log.Options{FS: j})
		if err != nil {
			fmt.Println(err)
			return
		}
		recs, err := l.Read(0, 10)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range recs {
			fmt.Printf("%d %s\n", r.Offset, r.Payload)
		}
		l.Close()
	}
	// Output:
	// generation files after Close: 0
	// 0 orders-0 first
	// 1 orders-0 second
	// 0 orders-1 first
	// 1 orders-1 second
}
