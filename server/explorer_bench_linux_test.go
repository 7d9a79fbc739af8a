package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkExplorerProducePairedChromiumOwnCore is ...Chromium with the
// browsers on a CPU of their own and the server with its producers on
// another, as a learner's browser has cores of its own beside a server it
// does not slow: the ratio is then what five real pages cost the server,
// not what drawing them costs the browser. It needs two CPUs.
func BenchmarkExplorerProducePairedChromiumOwnCore(b *testing.B) {
	browsers := pinServer(b)
	benchChromium(b, func(p *os.Process) {
		if err := pinTree(p.Pid, browsers); err != nil {
			b.Error(err)
		}
	})
}

// BenchmarkExplorerProducePairedControlOwnCore is ...Control with the
// server and its producers pinned as in ...ChromiumOwnCore, and the other
// CPU idle: the noise floor of that benchmark.
func BenchmarkExplorerProducePairedControlOwnCore(b *testing.B) {
	pinServer(b)
	var measuring atomic.Bool
	runPaired(b, explorerBenchServer(b), func(bool) {}, &measuring, nil)
}

// pinServer pins this process — the server and its producers — to the
// first CPU it may use until the benchmark ends, and returns the second,
// for the browsers. It skips with fewer than two.
func pinServer(b *testing.B) *unix.CPUSet {
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		b.Fatal(err)
	}
	var cpus []int
	for c := 0; c < runtime.NumCPU()*64 && len(cpus) < 2; c++ {
		if was.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		b.Skip("needs two CPUs: one for the server, one for the browsers")
	}
	var server, browsers unix.CPUSet
	server.Set(cpus[0])
	browsers.Set(cpus[1])
	if err := pinProcess(os.Getpid(), &server); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := pinProcess(os.Getpid(), &was); err != nil {
			b.Error(err)
		}
	})
	return &browsers
}

// pinProcess sets the CPUs of every thread of the process pid, listing
// them again until no new one appeared (a thread started meanwhile by one
// not yet pinned); threads started later take them from the thread that
// starts them.
func pinProcess(pid int, set *unix.CPUSet) error {
	done := map[int]bool{}
	for range 100 {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return err
		}
		fresh := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh, done[tid] = true, true
			// A thread that ended since the listing is no error.
			if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("thread %d of %d: %w", tid, pid, err)
			}
		}
		if !fresh {
			return nil
		}
	}
	return fmt.Errorf("process %d: threads kept starting while they were pinned", pid)
}

// pinTree pins the process pid and every process under it: a browser's
// renderers, its GPU and network processes.
func pinTree(pid int, set *unix.CPUSet) error {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // it ended
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		child, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		parent, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[parent] = append(children[parent], child)
		}
	}
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		if err := pinProcess(p, set); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
