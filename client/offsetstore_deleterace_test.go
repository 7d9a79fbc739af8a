package client

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Commits of one partition racing deletes of its offset and of the
// consumer: each ends in a state one of them leaves, never an error, and
// after a last commit the offset reads back.
func TestOffsetStoreDeleteOffsetRacesCommit(t *testing.T) {
	s, err := OpenOffsetStore(t.TempDir())
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 300)
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := range 100 {
			if err := s.Reset("g", "t", 0, uint64(i)); err != nil {
				errs <- err
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 100 {
			if _, err := s.DeleteOffset("g", "t", 0); err != nil {
				errs <- err
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 30 {
			if _, err := s.DeleteConsumer("g"); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit("g", "t", 0, 500))
	off, ok, err := s.Load("g", "t", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(500), off)
}
