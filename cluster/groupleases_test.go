package cluster

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// Rule (OpSaveGroupLeases): a group's leases are replaced whole, removed
// by an empty save, survive a snapshot, and are refused for an invalid
// group id or past MaxGroupLeases; nothing is journaled.
func TestMetaStateGroupLeases(t *testing.T) {
	s := newMetaState(t, 1)
	end := s.JournalEnd()
	mustApply(t, s, MetaCommand{Op: OpSaveGroupLeases, Time: metaT0, Consumer: "billing", Leases: []byte(`{"a":1}`)})
	mustApply(t, s, MetaCommand{Op: OpSaveGroupLeases, Time: metaT0, Consumer: "audit", Leases: []byte(`{"b":1}`)})
	mustApply(t, s, MetaCommand{Op: OpSaveGroupLeases, Time: metaT0, Consumer: "billing", Leases: []byte(`{"a":2}`)})
	require.Equal(t, map[string][]byte{"billing": []byte(`{"a":2}`), "audit": []byte(`{"b":1}`)}, s.Groups)

	parsed, err := ParseMetaState(encodeMeta(t, s))
	require.NoError(t, err)
	require.Equal(t, s.Groups, parsed.Groups)
	clone := s.Clone()
	clone.Groups["audit"][0] = 'x'
	require.Equal(t, []byte(`{"b":1}`), s.Groups["audit"], "a clone shares nothing")

	mustApply(t, s, MetaCommand{Op: OpSaveGroupLeases, Time: metaT0, Consumer: "billing"})
	require.Equal(t, map[string][]byte{"audit": []byte(`{"b":1}`)}, s.Groups)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpSaveGroupLeases, Time: metaT0, Consumer: "../x", Leases: []byte("{}")}), topic.ErrInvalidName)
	require.ErrorIs(t, applyRefused(t, s, MetaCommand{Op: OpSaveGroupLeases, Time: metaT0, Consumer: "big",
		Leases: []byte(strings.Repeat("x", MaxGroupLeases+1))}), ErrInvalidArgument)
	require.Equal(t, end, s.JournalEnd(), "leases are not journaled")
}

// In one process a group's leases are a file under <root>/groups, read
// back by a cluster opened again on the same root.
func TestClusterGroupLeasesSurviveReopen(t *testing.T) {
	root := t.TempDir()
	c, err := Open(root)
	require.NoError(t, err)
	got, err := c.GroupLeases()
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, c.SaveGroupLeases("billing", []byte(`{"a":1}`)))
	require.NoError(t, c.SaveGroupLeases("audit", []byte(`{"b":1}`)))
	require.NoError(t, c.SaveGroupLeases("audit", nil))
	require.NoError(t, c.SaveGroupLeases("never", nil), "removing what is not there is no error")
	require.ErrorIs(t, c.SaveGroupLeases("../x", []byte("{}")), topic.ErrInvalidName)
	require.NoError(t, c.Close())

	c, err = Open(root)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	got, err = c.GroupLeases()
	require.NoError(t, err)
	require.Equal(t, map[string][]byte{"billing": []byte(`{"a":1}`)}, got)
}
