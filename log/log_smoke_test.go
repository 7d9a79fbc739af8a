package log_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/logtest"
)

func TestLogAppendReadReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "log.bin")
	l, err := log.Open(path)
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		r, err := l.Append([]byte(fmt.Sprint("p", i)))
		require.NoError(t, err)
		require.Equal(t, uint64(i), r.Offset)
	}
	recs, err := l.Read(1, 3)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, "p1", string(recs[0].Payload))
	require.NoError(t, l.Close())
	_, err = l.Append(nil)
	require.ErrorIs(t, err, log.ErrClosed)

	l, err = log.Open(path)
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, uint64(5), l.NextOffset())
	recs, err = l.Read(0, 100)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	require.NoError(t, l.Truncate(2))
	require.Equal(t, uint64(2), l.NextOffset())
	r, err := l.Append([]byte("x"))
	require.NoError(t, err)
	require.Equal(t, uint64(2), r.Offset)
}

func TestLogConcurrentAppendsSmoke(t *testing.T) {
	l, err := log.Open(filepath.Join(t.TempDir(), "log.bin"))
	require.NoError(t, err)
	defer l.Close()
	var wg sync.WaitGroup
	got := make([][]uint64, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				r, err := l.Append([]byte(fmt.Sprintf("%d-%d", g, i)))
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], r.Offset)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, uint64(1600), l.NextOffset())
	recs, err := l.Read(0, 2000)
	require.NoError(t, err)
	for g := range got {
		for i, off := range got[g] {
			require.Equal(t, fmt.Sprintf("%d-%d", g, i), string(recs[off].Payload))
		}
	}
}

func TestLogStickyFailureSmoke(t *testing.T) {
	ffs := logtest.NewFaultFS(nil)
	path := filepath.Join(t.TempDir(), "log.bin")
	l, err := log.OpenWithOptions(path, log.Options{FS: ffs})
	require.NoError(t, err)
	_, err = l.Append([]byte("ok"))
	require.NoError(t, err)
	ffs.SetFault(logtest.FailNth(logtest.OpSync, 1))
	_, err = l.Append([]byte("lost"))
	require.True(t, errors.Is(err, logtest.ErrInjected))
	_, err = l.Append([]byte("later"))
	require.ErrorIs(t, err, log.ErrFailed)
	require.NoError(t, l.Close())
	l, err = log.Open(path)
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, uint64(1), l.NextOffset())
}
