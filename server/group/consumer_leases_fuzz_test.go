package group

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzParseLeases feeds ParseLeases anything: it never panics, refuses
// bad data with ErrInvalidLeases, and what it accepts encodes back to a
// form that decodes the same (seed corpus: testdata/fuzz/FuzzParseLeases).
func FuzzParseLeases(f *testing.F) {
	valid, err := EncodeLeases(Leases{Epoch: 7, Members: []MemberLease{
		{MemberID: "member-a", Epoch: 7, End: time.Date(2026, 12, 4, 16, 0, 45, 0, time.UTC), Partitions: []TopicPartitions{tps("orders", 0, 2)}},
		{MemberID: "member-b", Epoch: 6, End: time.Date(2026, 12, 4, 16, 0, 50, 0, time.UTC)},
	}})
	require.NoError(f, err)
	f.Add([]byte{})
	f.Add(valid)
	f.Add(append(append([]byte{}, valid...), "garbage"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLeases(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidLeases) {
				t.Fatalf("error %v does not wrap ErrInvalidLeases", err)
			}
			return
		}
		again, err := EncodeLeases(l)
		require.NoError(t, err)
		back, err := ParseLeases(again)
		require.NoError(t, err)
		require.Equal(t, len(l.Members), len(back.Members))
		for i := range l.Members {
			require.True(t, l.Members[i].End.Equal(back.Members[i].End))
			back.Members[i].End = l.Members[i].End
		}
		require.Equal(t, l, back)
	})
}

// The saved form round-trips, and each rule of ParseLeases refuses what
// breaks it with ErrInvalidLeases.
func TestConsumerLeasesParse(t *testing.T) {
	end := time.Date(2026, 12, 4, 16, 0, 45, 0, time.UTC)
	l := Leases{Epoch: 3, Members: []MemberLease{{MemberID: "a", Epoch: 3, End: end, Partitions: []TopicPartitions{tps("orders", 1, 3)}}}}
	data, err := EncodeLeases(l)
	require.NoError(t, err)
	back, err := ParseLeases(data)
	require.NoError(t, err)
	require.Equal(t, l, back)
	for name, bad := range map[string]string{
		"empty":          ``,
		"trailing":       string(data) + `{}`,
		"unknown field":  `{"version":1,"epoch":0,"members":[],"x":1}`,
		"version":        `{"version":2,"epoch":0,"members":[]}`,
		"negative epoch": `{"version":1,"epoch":-1,"members":[]}`,
		"member order":   `{"version":1,"epoch":0,"members":[{"id":"b","epoch":0,"end":"2026-01-01T00:00:00Z","partitions":[]},{"id":"a","epoch":0,"end":"2026-01-01T00:00:00Z","partitions":[]}]}`,
		"bad member id":  `{"version":1,"epoch":0,"members":[{"id":"a/b","epoch":0,"end":"2026-01-01T00:00:00Z","partitions":[]}]}`,
		"partitions":     `{"version":1,"epoch":0,"members":[{"id":"a","epoch":0,"end":"2026-01-01T00:00:00Z","partitions":[{"topic":"t","partitions":[2,1]}]}]}`,
		"no partitions":  `{"version":1,"epoch":0,"members":[{"id":"a","epoch":0,"end":"2026-01-01T00:00:00Z","partitions":[{"topic":"t","partitions":[]}]}]}`,
	} {
		_, err := ParseLeases([]byte(bad))
		require.ErrorIs(t, err, ErrInvalidLeases, name)
	}
}
