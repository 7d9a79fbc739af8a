package logtest

import (
	"testing"
	"time"
)

// WaitFor polls cond every 20 ms until it holds, failing the test with
// what and cond's last explanation when timeout passes first. Tests of
// things that happen on their own (a failover, a retention pass, a
// follower catching up) wait with it instead of sleeping a fixed time.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: still waiting for %s: %s", timeout, what, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
