package log_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pystream/pystream/log"
)

// Open a log, append two records and read them back. The offsets come from
// the log; Append returns only once the record is on stable storage.
func Example() {
	dir, err := os.MkdirTemp("", "pystream-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	l, err := log.Open(filepath.Join(dir, "events", "log.bin"))
	if err != nil {
		panic(err)
	}
	defer l.Close()

	for _, p := range []string{"user signed up", "user logged in"} {
		rec, err := l.Append([]byte(p))
		if err != nil {
			panic(err)
		}
		fmt.Println("appended offset", rec.Offset)
	}
	recs, err := l.Read(0, 10)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("%d: %s\n", r.Offset, r.Payload)
	}
	fmt.Println("next offset", l.NextOffset())
	// Output:
	// appended offset 0
	// appended offset 1
	// 0: user signed up
	// 1: user logged in
	// next offset 2
}

// A process killed in the middle of an append can leave a torn tail: the
// start of a frame that was never acknowledged. Open refuses the file and
// says so; Repair keeps a copy and cuts the torn tail off.
func ExampleRepair() {
	dir, err := os.MkdirTemp("", "pystream-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "log.bin")

	l, err := log.Open(path)
	if err != nil {
		panic(err)
	}
	if _, err := l.Append([]byte("acknowledged")); err != nil {
		panic(err)
	}
	l.Close()
	// Simulate the crash: half a frame header at the end of the file.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		panic(err)
	}
	f.Write([]byte{0, 0, 0, 30, 0, 0})
	f.Close()

	_, err = log.Open(path)
	var cerr *log.CorruptionError
	if errors.As(err, &cerr) && cerr.TornTail {
		fmt.Println("torn tail after byte", cerr.Pos)
		res, err := log.Repair(path)
		if err != nil {
			panic(err)
		}
		backup, err := os.ReadFile(res.Backup)
		if err != nil {
			panic(err)
		}
		fmt.Printf("removed %d bytes; kept a %d-byte copy named log.bin.broken-<unix-ns>: %v\n",
			res.Removed, len(backup), strings.HasPrefix(filepath.Base(res.Backup), "log.bin.broken-"))
	}

	l, err = log.Open(path)
	if err != nil {
		panic(err)
	}
	defer l.Close()
	recs, _ := l.Read(0, 10)
	fmt.Printf("%d record(s): %s\n", len(recs), recs[0].Payload)
	// Output:
	// torn tail after byte 36
	// removed 6 bytes; kept a 42-byte copy named log.bin.broken-<unix-ns>: true
	// 1 record(s): acknowledged
}

// AppendFrame and DecodeFrame are the whole on-disk format.
func ExampleDecodeFrame() {
	frame := log.AppendFrame(nil, log.Record{Offset: 7, Timestamp: 1, Payload: []byte("hi")})
	fmt.Printf("% x\n", frame)
	rec, n, err := log.DecodeFrame(frame)
	fmt.Println(rec.Offset, rec.Timestamp, string(rec.Payload), n, err)
	// Output:
	// 00 00 00 16 00 00 00 00 00 00 00 07 00 00 00 00 00 00 00 01 00 00 00 02 68 69
	// 7 1 hi 26 <nil>
}
