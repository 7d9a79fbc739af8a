package logtest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
)

// fatalTB records Fatalf instead of stopping the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

// WaitFor returns once cond holds, and fails naming what it waited for and
// cond's last explanation when it never does.
func TestWaitFor(t *testing.T) {
	n := 0
	logtest.WaitFor(t, time.Second, "three calls", func() (bool, string) { n++; return n == 3, "" })
	require.Equal(t, 3, n)

	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		logtest.WaitFor(f, 50*time.Millisecond, "the impossible", func() (bool, string) {
			if f.msg != "" {
				panic("stop") // Fatalf would have ended the goroutine
			}
			return false, "not yet"
		})
	}()
	<-done
	require.Contains(t, f.msg, "the impossible")
	require.Contains(t, f.msg, "not yet")
}
