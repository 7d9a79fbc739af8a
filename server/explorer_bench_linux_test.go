package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkExplorerProducePairedChromiumOwnCore is ...Chromium with the
// browsers on a CPU of their own and the server with its producers on
// another, as a learner's browser has cores of its own beside a server it
// does not slow: the ratio is then what five real pages cost the server,
// not what drawing them costs the browser. It needs two CPUs.
func BenchmarkExplorerProducePairedChromiumOwnCore(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs: one for the server, one for the browsers")
	}
	var was, server, browsers unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		b.Fatal(err)
	}
	server.Set(0)
	browsers.Set(1)
	if err := pinProcess(os.Getpid(), &server); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := pinProcess(os.Getpid(), &was); err != nil {
			b.Error(err)
		}
	})
	benchChromium(b, func(p *os.Process) {
		if err := pinTree(p.Pid, &browsers); err != nil {
			b.Error(err)
		}
	})
}

// pinProcess sets the CPUs of every thread of the process pid; threads it
// starts later take them from the thread that starts them.
func pinProcess(pid int, set *unix.CPUSet) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that ended since the listing is no error.
		if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("thread %d of %d: %w", tid, pid, err)
		}
	}
	return nil
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
