package group

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func protos(names ...string) []ProtocolMetadata {
	var out []ProtocolMetadata
	for _, n := range names {
		out = append(out, ProtocolMetadata{Name: n})
	}
	return out
}

// Kafka's protocol selection (GroupMetadata.selectProtocol): among the
// protocols every member supports, each member votes for its first
// choice, and the most votes win.
func TestClassicSelectProtocol(t *testing.T) {
	cases := []struct {
		name  string
		prefs [][]ProtocolMetadata
		want  string
	}{
		{"one member", [][]ProtocolMetadata{protos("range", "roundrobin")}, "range"},
		{"majority", [][]ProtocolMetadata{protos("range", "sticky"), protos("sticky", "range"), protos("sticky", "range")}, "sticky"},
		{"first choice not shared", [][]ProtocolMetadata{protos("cooperative-sticky", "range"), protos("range")}, "range"},
		{"tie: the first member's preference", [][]ProtocolMetadata{protos("b", "a"), protos("a", "b")}, "b"},
		{"nothing shared", [][]ProtocolMetadata{protos("a"), protos("b")}, ""},
		{"no members", nil, ""},
		{"duplicates count once", [][]ProtocolMetadata{protos("a", "a", "b"), protos("b", "a")}, "a"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, selectProtocol(c.prefs), c.name)
	}
}

// A join is admitted when it shares a protocol with every member
// (Kafka's supportsProtocols): a new group takes any non-empty type and
// list, an existing one its type and a common protocol.
func TestClassicJoinable(t *testing.T) {
	members := [][]ProtocolMetadata{protos("range", "sticky"), protos("sticky")}
	require.True(t, joinable("", nil, "consumer", protos("x")))
	require.False(t, joinable("", nil, "", protos("x")), "no type")
	require.False(t, joinable("", nil, "consumer", nil), "no protocols")
	require.True(t, joinable("consumer", members, "consumer", protos("range", "sticky")))
	require.False(t, joinable("consumer", members, "consumer", protos("range")), "range is not every member's")
	require.False(t, joinable("consumer", members, "connect", protos("sticky")), "another type")
}

// Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms
// bound a member's session timeout, both ends included.
func TestClassicSessionTimeoutBounds(t *testing.T) {
	require.NoError(t, checkSessionTimeout(6*time.Second, 6*time.Second, 30*time.Minute))
	require.NoError(t, checkSessionTimeout(30*time.Minute, 6*time.Second, 30*time.Minute))
	require.ErrorIs(t, checkSessionTimeout(5999*time.Millisecond, 6*time.Second, 30*time.Minute), ErrInvalidSessionTimeout)
	require.ErrorIs(t, checkSessionTimeout(31*time.Minute, 6*time.Second, 30*time.Minute), ErrInvalidSessionTimeout)
}

// A member's metadata matches when names, bytes and order are the same.
func TestClassicSameProtocols(t *testing.T) {
	a := []ProtocolMetadata{{"range", []byte{1}}, {"sticky", []byte{2}}}
	require.True(t, sameProtocols(a, []ProtocolMetadata{{"range", []byte{1}}, {"sticky", []byte{2}}}))
	require.False(t, sameProtocols(a, []ProtocolMetadata{{"sticky", []byte{2}}, {"range", []byte{1}}}))
	require.False(t, sameProtocols(a, []ProtocolMetadata{{"range", []byte{1}}, {"sticky", []byte{3}}}))
	require.False(t, sameProtocols(a, a[:1]))
}

// A consumer assignment that does not decode gives no partitions, and
// never a panic.
func TestClassicDecodeAssignmentGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {0, 0, 0, 0, 0, 1}, {0, 0, 0x7f, 0xff, 0xff, 0xff}, {0, 3, 0, 0, 0, 1, 0, 200}} {
		require.Nil(t, decodeAssignment(b), "%x", b)
	}
}
