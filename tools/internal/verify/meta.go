package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pystream/pystream/topic"
)

// The metadata formats are fixed by docs/design.md § topic.meta,
// docs/design.md § Offset files and docs/design.md § cluster.meta. They are
// parsed here, read-only and independently of the modules that write them, so
// that the verifier can judge a data directory without opening it the way a
// server would (which might create files).

// metaVersion is the only version of every metadata document.
const metaVersion = 1

// TopicMeta is a parsed topic.meta.
type TopicMeta struct {
	Name           string
	PartitionCount int
}

// ParseTopicMeta parses and checks a topic.meta document:
// {"version": 1, "name": NAME, "partition_count": N}. dirName, when not
// empty, is the topic's directory, whose name must equal the stored name.
func ParseTopicMeta(data []byte, dirName string) (TopicMeta, error) {
	var doc struct {
		Version        *int    `json:"version"`
		Name           *string `json:"name"`
		PartitionCount *int    `json:"partition_count"`
	}
	if err := decodeStrict(data, &doc); err != nil {
		return TopicMeta{}, err
	}
	switch {
	case doc.Version == nil:
		return TopicMeta{}, metaErrf("missing version")
	case *doc.Version != metaVersion:
		return TopicMeta{}, metaErrf("unknown version %d", *doc.Version)
	case doc.Name == nil:
		return TopicMeta{}, metaErrf("missing name")
	case doc.PartitionCount == nil:
		return TopicMeta{}, metaErrf("missing partition_count")
	case *doc.PartitionCount < 1:
		return TopicMeta{}, metaErrf("partition_count %d is below 1", *doc.PartitionCount)
	}
	if err := topic.ValidateName(*doc.Name); err != nil {
		return TopicMeta{}, metaErr("unsafe stored name", err)
	}
	if dirName != "" && *doc.Name != dirName {
		return TopicMeta{}, metaErrf("stored name %q is not the directory name %q", *doc.Name, dirName)
	}
	return TopicMeta{Name: *doc.Name, PartitionCount: *doc.PartitionCount}, nil
}

// ParseOffset parses and checks an offset file: {"version": 1, "offset": N}
// with N >= 0.
func ParseOffset(data []byte) (uint64, error) {
	var doc struct {
		Version *int             `json:"version"`
		Offset  *json.RawMessage `json:"offset"`
	}
	if err := decodeStrict(data, &doc); err != nil {
		return 0, err
	}
	switch {
	case doc.Version == nil:
		return 0, metaErrf("missing version")
	case *doc.Version != metaVersion:
		return 0, metaErrf("unknown version %d", *doc.Version)
	case doc.Offset == nil:
		return 0, metaErrf("missing offset")
	}
	raw := string(*doc.Offset)
	if strings.HasPrefix(raw, "-") {
		return 0, metaErrf("negative offset %s", raw)
	}
	off, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return 0, metaErr(fmt.Sprintf("offset %s is not a whole number", raw), err)
	}
	return off, nil
}

// ClusterMeta is a parsed cluster.meta.
type ClusterMeta struct {
	// Brokers are the registered broker ids.
	Brokers []int
	// Topics maps a topic name to its assignment.
	Topics map[string]TopicAssignment
}

// TopicAssignment is one topic of cluster.meta.
type TopicAssignment struct {
	PartitionCount    int
	ReplicationFactor int
	// Partitions[p] is partition p.
	Partitions []PartitionAssignment
}

// PartitionAssignment is one partition of cluster.meta.
type PartitionAssignment struct {
	Partition int
	Leader    int
	// Followers and Active are sorted ascending.
	Followers []int
	Active    []int
}

// Replicas returns the leader followed by the followers.
func (p PartitionAssignment) Replicas() []int {
	return append([]int{p.Leader}, p.Followers...)
}

// IsActive reports whether broker is in the partition's active set.
func (p PartitionAssignment) IsActive(broker int) bool {
	return slices.Contains(p.Active, broker)
}

// ParseClusterMeta parses and checks a cluster.meta document against the rules
// of docs/design.md § cluster.meta: positive unique broker ids; for every topic
// a valid name, a partition count of at least 1 matching its partition list, a
// replication factor between 1 and the broker count, and for every partition a
// registered leader, rf-1 registered followers (sorted, without the leader) and
// an active set (sorted) that holds the leader and only assigned replicas.
func ParseClusterMeta(data []byte) (ClusterMeta, error) {
	type partitionDoc struct {
		Partition *int   `json:"partition"`
		Leader    *int   `json:"leader"`
		Followers *[]int `json:"followers"`
		Active    *[]int `json:"active"`
	}
	type topicDoc struct {
		PartitionCount    *int            `json:"partition_count"`
		ReplicationFactor *int            `json:"replication_factor"`
		Partitions        *[]partitionDoc `json:"partitions"`
	}
	var doc struct {
		Version *int                 `json:"version"`
		Brokers *[]int               `json:"brokers"`
		Topics  *map[string]topicDoc `json:"topics"`
	}
	if err := decodeStrict(data, &doc); err != nil {
		return ClusterMeta{}, err
	}
	switch {
	case doc.Version == nil:
		return ClusterMeta{}, metaErrf("missing version")
	case *doc.Version != metaVersion:
		return ClusterMeta{}, metaErrf("unknown version %d", *doc.Version)
	case doc.Brokers == nil:
		return ClusterMeta{}, metaErrf("missing brokers")
	case doc.Topics == nil:
		return ClusterMeta{}, metaErrf("missing topics")
	}
	m := ClusterMeta{Brokers: *doc.Brokers, Topics: make(map[string]TopicAssignment)}
	for i, b := range m.Brokers {
		if b < 1 {
			return ClusterMeta{}, metaErrf("broker id %d is not positive", b)
		}
		if slices.Contains(m.Brokers[:i], b) {
			return ClusterMeta{}, metaErrf("broker id %d listed twice", b)
		}
	}
	for name, td := range *doc.Topics {
		if err := topic.ValidateName(name); err != nil {
			return ClusterMeta{}, metaErr("unsafe topic name", err)
		}
		switch {
		case td.PartitionCount == nil:
			return ClusterMeta{}, metaErrf("topic %q: missing partition_count", name)
		case td.ReplicationFactor == nil:
			return ClusterMeta{}, metaErrf("topic %q: missing replication_factor", name)
		case td.Partitions == nil:
			return ClusterMeta{}, metaErrf("topic %q: missing partitions", name)
		}
		ta := TopicAssignment{PartitionCount: *td.PartitionCount, ReplicationFactor: *td.ReplicationFactor}
		switch {
		case ta.PartitionCount < 1:
			return ClusterMeta{}, metaErrf("topic %q: partition_count %d is below 1", name, ta.PartitionCount)
		case len(*td.Partitions) != ta.PartitionCount:
			return ClusterMeta{}, metaErrf("topic %q: %d partitions listed, partition_count %d", name, len(*td.Partitions), ta.PartitionCount)
		case ta.ReplicationFactor < 1 || ta.ReplicationFactor > len(m.Brokers):
			return ClusterMeta{}, metaErrf("topic %q: replication_factor %d outside 1..%d brokers", name, ta.ReplicationFactor, len(m.Brokers))
		}
		for i, pd := range *td.Partitions {
			if pd.Partition == nil || pd.Leader == nil || pd.Followers == nil || pd.Active == nil {
				return ClusterMeta{}, metaErrf("topic %q: partition entry %d lacks partition, leader, followers or active", name, i)
			}
			pa := PartitionAssignment{Partition: *pd.Partition, Leader: *pd.Leader, Followers: *pd.Followers, Active: *pd.Active}
			if err := checkPartition(m.Brokers, ta.ReplicationFactor, i, pa); err != nil {
				return ClusterMeta{}, metaErrf("topic %q: %s", name, err.Reason)
			}
			ta.Partitions = append(ta.Partitions, pa)
		}
		m.Topics[name] = ta
	}
	return m, nil
}

// checkPartition checks partition entry i of a topic with replication factor
// rf against the registered brokers.
func checkPartition(brokers []int, rf, i int, p PartitionAssignment) *MetadataError {
	switch {
	case p.Partition != i:
		return metaErrf("partition entry %d says partition %d", i, p.Partition)
	case !slices.Contains(brokers, p.Leader):
		return metaErrf("partition %d: leader %d is not a registered broker", i, p.Leader)
	case 1+len(p.Followers) != rf:
		return metaErrf("partition %d: %d followers for replication_factor %d", i, len(p.Followers), rf)
	case !strictlyAscending(p.Followers):
		return metaErrf("partition %d: followers %v are not sorted and unique", i, p.Followers)
	case slices.Contains(p.Followers, p.Leader):
		return metaErrf("partition %d: leader %d is also a follower", i, p.Leader)
	case !strictlyAscending(p.Active):
		return metaErrf("partition %d: active %v is not sorted and unique", i, p.Active)
	case !slices.Contains(p.Active, p.Leader):
		return metaErrf("partition %d: leader %d is not active", i, p.Leader)
	}
	for _, f := range p.Followers {
		if !slices.Contains(brokers, f) {
			return metaErrf("partition %d: follower %d is not a registered broker", i, f)
		}
	}
	for _, a := range p.Active {
		if a != p.Leader && !slices.Contains(p.Followers, a) {
			return metaErrf("partition %d: active broker %d is not a replica", i, a)
		}
	}
	return nil
}

func strictlyAscending(s []int) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

// decodeStrict decodes one JSON object into v and refuses trailing data.
// Unknown fields are allowed, so that a newer writer adding a field is not
// reported as damage; a wrong type or a missing required field is.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return metaErr("not a valid JSON document", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return metaErrf("trailing data after the JSON document")
	}
	return nil
}
