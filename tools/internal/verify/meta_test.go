package verify

import (
	"testing"

	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

// TestVerifyParseTopicMeta pins docs/design.md § topic.meta: topic.meta is
// {"version": 1, "name", "partition_count"}; bad JSON, missing fields, an
// unsafe name or a name other than the directory's are damage.
func TestVerifyParseTopicMeta(t *testing.T) {
	tests := []struct {
		name, doc, dir string
		want           TopicMeta
		ok             bool
	}{
		{"valid", `{"version": 1, "name": "orders", "partition_count": 3}`, "orders", TopicMeta{"orders", 3}, true},
		{"unknown field allowed", `{"version": 1, "name": "orders", "partition_count": 3, "x": 1}`, "", TopicMeta{"orders", 3}, true},
		{"not json", `{"version": 1,`, "", TopicMeta{}, false},
		{"trailing data", `{"version": 1, "name": "orders", "partition_count": 3} {}`, "", TopicMeta{}, false},
		{"missing version", `{"name": "orders", "partition_count": 3}`, "", TopicMeta{}, false},
		{"version 2", `{"version": 2, "name": "orders", "partition_count": 3}`, "", TopicMeta{}, false},
		{"missing count", `{"version": 1, "name": "orders"}`, "", TopicMeta{}, false},
		{"zero count", `{"version": 1, "name": "orders", "partition_count": 0}`, "", TopicMeta{}, false},
		{"count as string", `{"version": 1, "name": "orders", "partition_count": "3"}`, "", TopicMeta{}, false},
		{"unsafe name", `{"version": 1, "name": "../x", "partition_count": 3}`, "", TopicMeta{}, false},
		{"name differs from dir", `{"version": 1, "name": "orders", "partition_count": 3}`, "payments", TopicMeta{}, false},
		{"null document", `null`, "", TopicMeta{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTopicMeta([]byte(tt.doc), tt.dir)
			if !tt.ok {
				require.ErrorIs(t, err, ErrMetadata)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	_, err := ParseTopicMeta([]byte(`{"version": 1, "name": "a b", "partition_count": 1}`), "")
	require.ErrorIs(t, err, topic.ErrInvalidName, "the cause is kept")
}

// TestVerifyParseOffset pins the offset file format {"version": 1,
// "offset": N}: a wrong type, a negative offset or an unknown version is
// damage.
func TestVerifyParseOffset(t *testing.T) {
	tests := []struct {
		name, doc string
		want      uint64
		ok        bool
	}{
		{"valid", `{"version": 1, "offset": 123}`, 123, true},
		{"zero", `{"version": 1, "offset": 0}`, 0, true},
		{"largest", `{"version": 1, "offset": 18446744073709551615}`, 1<<64 - 1, true},
		{"negative", `{"version": 1, "offset": -1}`, 0, false},
		{"fraction", `{"version": 1, "offset": 1.5}`, 0, false},
		{"string", `{"version": 1, "offset": "5"}`, 0, false},
		{"null", `{"version": 1, "offset": null}`, 0, false},
		{"missing", `{"version": 1}`, 0, false},
		{"version 0", `{"version": 0, "offset": 1}`, 0, false},
		{"empty file", ``, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOffset([]byte(tt.doc))
			if !tt.ok {
				require.ErrorIs(t, err, ErrMetadata)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestVerifyParseClusterMeta pins docs/design.md § cluster.meta.
func TestVerifyParseClusterMeta(t *testing.T) {
	doc := func(partitions string) string {
		return `{"version": 1, "brokers": [1, 2, 3], "topics": {"orders": {"partition_count": 1, "replication_factor": 2, "partitions": [` + partitions + `]}}}`
	}
	tests := []struct {
		name, doc string
		ok        bool
	}{
		{"valid", doc(`{"partition": 0, "leader": 1, "followers": [2], "active": [1, 2]}`), true},
		{"after failover", doc(`{"partition": 0, "leader": 2, "followers": [1], "active": [2]}`), true},
		{"no topics", `{"version": 1, "brokers": [], "topics": {}}`, true},
		{"missing brokers", `{"version": 1, "topics": {}}`, false},
		{"broker zero", `{"version": 1, "brokers": [0], "topics": {}}`, false},
		{"broker twice", `{"version": 1, "brokers": [1, 1], "topics": {}}`, false},
		{"wrong partition index", doc(`{"partition": 1, "leader": 1, "followers": [2], "active": [1, 2]}`), false},
		{"unknown leader", doc(`{"partition": 0, "leader": 9, "followers": [2], "active": [9, 2]}`), false},
		{"too few followers", doc(`{"partition": 0, "leader": 1, "followers": [], "active": [1]}`), false},
		{"leader is follower", doc(`{"partition": 0, "leader": 1, "followers": [1], "active": [1]}`), false},
		{"unsorted active", doc(`{"partition": 0, "leader": 1, "followers": [2], "active": [2, 1]}`), false},
		{"leader inactive", doc(`{"partition": 0, "leader": 1, "followers": [2], "active": [2]}`), false},
		{"active stranger", doc(`{"partition": 0, "leader": 1, "followers": [2], "active": [1, 2, 3]}`), false},
		{"missing active", doc(`{"partition": 0, "leader": 1, "followers": [2]}`), false},
		{"count disagrees", doc(``), false},
		{"rf above brokers", `{"version": 1, "brokers": [1], "topics": {"t": {"partition_count": 1, "replication_factor": 2, "partitions": [{"partition": 0, "leader": 1, "followers": [2], "active": [1]}]}}}`, false},
		{"bad topic name", `{"version": 1, "brokers": [1], "topics": {"a/b": {"partition_count": 1, "replication_factor": 1, "partitions": [{"partition": 0, "leader": 1, "followers": [], "active": [1]}]}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseClusterMeta([]byte(tt.doc))
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrMetadata)
			}
		})
	}
	cm, err := ParseClusterMeta([]byte(doc(`{"partition": 0, "leader": 2, "followers": [1], "active": [2]}`)))
	require.NoError(t, err)
	p := cm.Topics["orders"].Partitions[0]
	require.Equal(t, []int{2, 1}, p.Replicas())
	require.True(t, p.IsActive(2))
	require.False(t, p.IsActive(1))
}
