package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// MetaFileName is the cluster metadata file inside the cluster root.
const MetaFileName = "cluster.meta"

// MetaVersion is the cluster.meta version this package writes. Version 2
// added each partition's placement order ("replicas") and leader epoch;
// ParseClusterMeta still reads version 1 (see UpgradeMetaV1), and Open
// rewrites such a file as version 2 before using it.
const MetaVersion = 2

// metaVersion1 is the first format: "followers" ascending instead of
// "replicas", no leader epoch.
const metaVersion1 = 1

// Metadata is the content of cluster.meta: the known brokers and, for every
// topic, its partition count, replication factor and each partition's
// replicas in placement order, leader, leader epoch and active replicas. It is plain data; the Cluster keeps
// the persisted copy and replaces it only after a successful write.
type Metadata struct {
	// Brokers are the known broker ids, ascending.
	Brokers []int
	// Topics maps a topic name to its metadata.
	Topics map[string]TopicMetadata
}

// TopicMetadata is one topic in cluster.meta.
type TopicMetadata struct {
	PartitionCount    int
	ReplicationFactor int
	// Config holds the topic's configuration overrides: only the keys set
	// for this topic, each value in topic.ParseConfigOverrides' canonical
	// form. Nil (or empty) when the topic has none: its effective
	// configuration is then the server's defaults, and cluster.meta has
	// no "config" field for it (a file without overrides reads and writes
	// byte for byte as before the field existed).
	Config map[string]string
	// Partitions has one entry per partition, in partition order.
	Partitions []PartitionMetadata
}

// Holders are the brokers that hold a replica of one of the topic's
// partitions, ascending.
func (tm TopicMetadata) Holders() []int {
	var out []int
	for _, pm := range tm.Partitions {
		for _, id := range pm.Replicas {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// PartitionMetadata is one partition in cluster.meta.
//
// Its JSON form (used by the journal) has the field names of cluster.meta.
type PartitionMetadata struct {
	Partition int `json:"partition"`
	// Leader is the broker that accepts writes; one of Replicas.
	Leader int `json:"leader"`
	// LeaderEpoch counts the partition's leader changes: every failover
	// and every leader move adds one, so a leader from an older epoch can
	// be told apart from the current one. It starts at 0.
	LeaderEpoch uint64 `json:"leader_epoch"`
	// Replicas are the assigned brokers in placement order: the first is
	// the preferred leader. They never change after creation; only the
	// roles move among them.
	Replicas []int `json:"replicas"`
	// Active are the replicas a write must reach, ascending; always
	// including the leader.
	Active []int `json:"active"`
}

// Assigned returns the partition's assigned brokers (leader and followers),
// ascending.
func (p PartitionMetadata) Assigned() []int {
	ids := slices.Clone(p.Replicas)
	slices.Sort(ids)
	return ids
}

// assigned reports whether broker id holds a replica of the partition.
func (p PartitionMetadata) assigned(id int) bool { return slices.Contains(p.Replicas, id) }

// Followers returns the assigned brokers other than the leader, ascending.
func (p PartitionMetadata) Followers() []int {
	ids := []int{}
	for _, id := range p.Assigned() {
		if id != p.Leader {
			ids = append(ids, id)
		}
	}
	return ids
}

// Preferred returns the partition's preferred leader, the first replica in
// placement order, or 0 when it has none.
func (p PartitionMetadata) Preferred() int {
	if len(p.Replicas) == 0 {
		return 0
	}
	return p.Replicas[0]
}

// clone returns a deep copy.
func (p PartitionMetadata) clone() PartitionMetadata {
	p.Replicas, p.Active = slices.Clone(p.Replicas), slices.Clone(p.Active)
	return p
}

// clone returns a deep copy, so a proposed change never aliases the
// persisted metadata.
func (m Metadata) clone() Metadata {
	out := Metadata{Brokers: slices.Clone(m.Brokers), Topics: make(map[string]TopicMetadata, len(m.Topics))}
	for name, t := range m.Topics {
		parts := make([]PartitionMetadata, len(t.Partitions))
		for i, p := range t.Partitions {
			parts[i] = p.clone()
		}
		t.Partitions = parts
		t.Config = maps.Clone(t.Config)
		out.Topics[name] = t
	}
	if out.Brokers == nil {
		out.Brokers = []int{}
	}
	return out
}

// EncodeClusterMeta renders m as cluster.meta version MetaVersion: JSON with
// one partition per line, topics in name order, replicas in placement
// order, other lists ascending, a trailing newline. It
// refuses metadata that ParseClusterMeta would refuse.
func EncodeClusterMeta(m Metadata) ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"version\": %d,\n  \"brokers\": %s,\n  \"topics\": {", MetaVersion, intList(m.Brokers))
	for i, name := range slices.Sorted(maps.Keys(m.Topics)) {
		t := m.Topics[name]
		if i > 0 {
			b.WriteString(",")
		}
		quoted, err := json.Marshal(name)
		if err != nil {
			return nil, fmt.Errorf("cluster: encode metadata: %w", err)
		}
		fmt.Fprintf(&b, "\n    %s: {\n      \"partition_count\": %d,\n      \"replication_factor\": %d,\n",
			quoted, t.PartitionCount, t.ReplicationFactor)
		if len(t.Config) > 0 {
			fmt.Fprintf(&b, "      \"config\": %s,\n", configObject(t.Config))
		}
		b.WriteString("      \"partitions\": [")
		// One line a partition, appended rather than formatted: the file
		// is written whole at every change of the metadata, and with
		// thousands of partitions formatting them was most of the cost.
		line := make([]byte, 0, 128)
		for j, p := range t.Partitions {
			if j > 0 {
				b.WriteString(",")
			}
			line = append(line[:0], "\n        {\"partition\": "...)
			line = strconv.AppendInt(line, int64(p.Partition), 10)
			line = append(line, ", \"leader\": "...)
			line = strconv.AppendInt(line, int64(p.Leader), 10)
			line = append(line, ", \"leader_epoch\": "...)
			line = strconv.AppendUint(line, p.LeaderEpoch, 10)
			line = append(line, ", \"replicas\": "...)
			line = appendIntList(line, p.Replicas)
			line = append(line, ", \"active\": "...)
			line = appendIntList(line, p.Active)
			line = append(line, '}')
			b.Write(line)
		}
		b.WriteString("\n      ]\n    }")
	}
	if len(m.Topics) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes(), nil
}

// configObject renders a topic's overrides as a one-line JSON object, keys
// sorted.
func configObject(config map[string]string) string {
	parts := make([]string, 0, len(config))
	for _, key := range slices.Sorted(maps.Keys(config)) {
		k, _ := json.Marshal(key)
		v, _ := json.Marshal(config[key])
		parts = append(parts, string(k)+": "+string(v))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// intList renders ids as a one-line JSON array.
func intList(ids []int) string {
	return string(appendIntList(nil, ids))
}

// appendIntList appends ids to dst as a one-line JSON array.
func appendIntList(dst []byte, ids []int) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendInt(dst, int64(id), 10)
	}
	return append(dst, ']')
}

func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// ParseClusterMeta decodes and fully validates cluster.meta, of either
// version. It is the one parser of the file: Open reads cluster.meta with
// it, and so does `pystream log verify`. A version-1 file comes back as
// version-2 metadata: each partition's replicas are its leader then its
// followers (the order placement gave them, as long as no failover moved
// the leader), its leader epoch 0. Anything it does not accept is reported
// as a *MetadataError (with an empty Path); nothing is guessed or repaired.
// Every JSON object in the file is split by durable.ObjectFields, the
// decoder topic.meta and offset files use too, so a key repeated at any
// level (a field, or a topic name) is refused rather than silently
// resolved to its last value. Unknown fields, missing fields, nulls,
// trailing data, an unknown version, non-positive or duplicate broker ids,
// invalid topic names, and partition entries that are incomplete, out of
// order or inconsistent (a leader outside the replicas, an active replica
// that is not assigned, a leader that is not active, a replica count that
// does not match the replication factor, a replica listed twice, lists
// that must ascend and do not) are all refused.
func ParseClusterMeta(data []byte) (Metadata, error) {
	m, _, err := parseClusterMeta(data)
	return m, err
}

// parseClusterMeta is ParseClusterMeta that also says which version the
// file was.
func parseClusterMeta(data []byte) (Metadata, int, error) {
	top, err := metaObject(data, "", "version", "brokers", "topics")
	if err != nil {
		return Metadata{}, 0, err
	}
	var version int
	if err := metaValue(top, "", "version", &version); err != nil {
		return Metadata{}, 0, err
	}
	if version != MetaVersion && version != metaVersion1 {
		return Metadata{}, 0, &MetadataError{Reason: fmt.Sprintf("unsupported version %d, want %d or %d", version, metaVersion1, MetaVersion)}
	}
	m := Metadata{Topics: map[string]TopicMetadata{}}
	if err := metaValue(top, "", "brokers", &m.Brokers); err != nil {
		return Metadata{}, 0, err
	}
	m.Brokers = nonNil(m.Brokers)
	topics, err := durable.ObjectFields(top["topics"])
	if err != nil {
		return Metadata{}, 0, objectError("field \"topics\": ", err)
	}
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		t, err := parseTopicMeta(name, topics[name], version)
		if err != nil {
			return Metadata{}, 0, err
		}
		m.Topics[name] = t
	}
	if err := m.validate(); err != nil {
		return Metadata{}, 0, err
	}
	return m, version, nil
}

// parseTopicMeta decodes one topic object of cluster.meta of the given
// version; validate checks its rules.
func parseTopicMeta(name string, raw json.RawMessage, version int) (TopicMetadata, error) {
	where := fmt.Sprintf("topic %q: ", name)
	fields, err := metaObjectOptional(raw, where, []string{"config"}, "partition_count", "replication_factor", "partitions")
	if err != nil {
		return TopicMetadata{}, err
	}
	var t TopicMetadata
	if raw, ok := fields["config"]; ok {
		if t.Config, err = parseTopicConfig(where, raw); err != nil {
			return TopicMetadata{}, err
		}
	}
	var entries []json.RawMessage
	for _, f := range []struct {
		name string
		v    any
	}{{"partition_count", &t.PartitionCount}, {"replication_factor", &t.ReplicationFactor}, {"partitions", &entries}} {
		if err := metaValue(fields, where, f.name, f.v); err != nil {
			return TopicMetadata{}, err
		}
	}
	for i, entry := range entries {
		p, err := parsePartitionMeta(fmt.Sprintf("topic %q: partition entry %d: ", name, i), entry, version)
		if err != nil {
			return TopicMetadata{}, err
		}
		t.Partitions = append(t.Partitions, p)
	}
	return t, nil
}

// parsePartitionMeta decodes one partition entry. A version-1 entry has
// "followers" (ascending) where version 2 has "leader_epoch" and
// "replicas"; it is read as replicas = leader then followers, epoch 0.
func parsePartitionMeta(where string, entry json.RawMessage, version int) (PartitionMetadata, error) {
	names := []string{"partition", "leader", "leader_epoch", "replicas", "active"}
	if version == metaVersion1 {
		names = []string{"partition", "leader", "followers", "active"}
	}
	fields, err := metaObject(entry, where, names...)
	if err != nil {
		return PartitionMetadata{}, err
	}
	var p PartitionMetadata
	var followers []int
	targets := map[string]any{"partition": &p.Partition, "leader": &p.Leader, "leader_epoch": &p.LeaderEpoch,
		"replicas": &p.Replicas, "followers": &followers, "active": &p.Active}
	for _, name := range names {
		if err := metaValue(fields, where, name, targets[name]); err != nil {
			return PartitionMetadata{}, err
		}
	}
	if version == metaVersion1 {
		if err := ascendingPositive(followers); err != nil {
			return PartitionMetadata{}, &MetadataError{Reason: fmt.Sprintf("%sfollowers: %v", where, err)}
		}
		p.Replicas = append([]int{p.Leader}, followers...)
	}
	p.Replicas, p.Active = nonNil(p.Replicas), nonNil(p.Active)
	return p, nil
}

// parseTopicConfig decodes a topic's "config" object: string values only,
// no key twice, not empty (an encoder leaves out a topic's empty config).
// Its keys and values are checked by validate.
func parseTopicConfig(where string, raw json.RawMessage) (map[string]string, error) {
	where += "field \"config\": "
	fields, err := durable.ObjectFields(raw)
	if err != nil {
		return nil, objectError(where, err)
	}
	if len(fields) == 0 {
		return nil, &MetadataError{Reason: where + "empty (a topic without overrides has no config field)"}
	}
	out := make(map[string]string, len(fields))
	for key, v := range fields {
		var s string
		if string(v) == "null" || json.Unmarshal(v, &s) != nil {
			return nil, &MetadataError{Reason: fmt.Sprintf("%s%q: not a JSON string", where, key)}
		}
		out[key] = s
	}
	return out, nil
}

// metaObject splits one JSON object of cluster.meta into its fields and
// requires exactly the fields named: each present and not null, no other.
// where prefixes the reason of the *MetadataError.
func metaObject(raw []byte, where string, names ...string) (map[string]json.RawMessage, error) {
	return metaObjectOptional(raw, where, nil, names...)
}

// metaObjectOptional is metaObject that also allows the optional fields
// (not null when present).
func metaObjectOptional(raw []byte, where string, optional []string, names ...string) (map[string]json.RawMessage, error) {
	fields, err := durable.ObjectFields(raw)
	if err != nil {
		return nil, objectError(where, err)
	}
	for _, name := range names {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			return nil, &MetadataError{Reason: fmt.Sprintf("%smissing field %q", where, name)}
		}
	}
	for _, name := range optional {
		if v, ok := fields[name]; ok && string(v) == "null" {
			return nil, &MetadataError{Reason: fmt.Sprintf("%sfield %q is null", where, name)}
		}
	}
	if key, ok := durable.UnknownField(fields, append(slices.Clone(names), optional...)...); ok {
		return nil, &MetadataError{Reason: fmt.Sprintf("%sunknown field %q", where, key)}
	}
	return fields, nil
}

// metaValue decodes field name of fields into v (an *int or a *[]int, or
// a *[]json.RawMessage), refusing a value of another JSON type.
func metaValue(fields map[string]json.RawMessage, where, name string, v any) error {
	if err := json.Unmarshal(fields[name], v); err != nil {
		return &MetadataError{Reason: fmt.Sprintf("%sfield %q", where, name), Err: err}
	}
	return nil
}

// objectError turns durable.ObjectFields' refusal into a *MetadataError.
func objectError(where string, err error) error {
	reason, cause := objectRefusal(where, err)
	return &MetadataError{Reason: reason, Err: cause}
}

// objectRefusal splits durable.ObjectFields' refusal into the reason and
// the cause that the package's file errors (*MetadataError,
// *HWCheckpointError) carry.
func objectRefusal(where string, err error) (reason string, cause error) {
	var oe *durable.ObjectError
	if errors.As(err, &oe) {
		return where + oe.Reason, oe.Err
	}
	return where + "not JSON", err
}

// validate checks every rule of the format that the JSON shape cannot.
func (m Metadata) validate() error {
	bad := func(format string, args ...any) error {
		return &MetadataError{Reason: fmt.Sprintf(format, args...)}
	}
	if err := ascendingPositive(m.Brokers); err != nil {
		return bad("brokers: %v", err)
	}
	known := func(id int) bool { _, ok := slices.BinarySearch(m.Brokers, id); return ok }
	for _, name := range slices.Sorted(maps.Keys(m.Topics)) {
		t := m.Topics[name]
		if err := topic.ValidateName(name); err != nil {
			return &MetadataError{Reason: fmt.Sprintf("topic name %q", name), Err: err}
		}
		switch {
		case t.PartitionCount < 1:
			return bad("topic %q: partition_count %d, want at least 1", name, t.PartitionCount)
		case t.ReplicationFactor < 1 || t.ReplicationFactor > len(m.Brokers):
			return bad("topic %q: replication_factor %d, want 1..%d (the number of brokers)", name, t.ReplicationFactor, len(m.Brokers))
		case len(t.Partitions) != t.PartitionCount:
			return bad("topic %q: %d partition entries, partition_count says %d", name, len(t.Partitions), t.PartitionCount)
		}
		canonical, err := topic.ParseConfigOverrides(t.Config)
		if err != nil {
			return &MetadataError{Reason: fmt.Sprintf("topic %q: config", name), Err: err}
		}
		for key, v := range canonical {
			if t.Config[key] != v {
				return bad("topic %q: config %q = %q, not in canonical form %q", name, key, t.Config[key], v)
			}
		}
		for i, p := range t.Partitions {
			// Named only on a refusal: a check of every partition runs
			// at every change of the metadata.
			where := partitionWhere{name, i}
			if p.Partition != i {
				return bad("topic %q: partition entry %d says partition %d", name, i, p.Partition)
			}
			if len(p.Replicas) != t.ReplicationFactor {
				return bad("%s: %d replica(s), replication_factor %d needs %d", where, len(p.Replicas), t.ReplicationFactor, t.ReplicationFactor)
			}
			if err := ascendingPositive(p.Assigned()); err != nil {
				return bad("%s: replicas %v: %v", where, p.Replicas, err)
			}
			for _, r := range p.Replicas {
				if !known(r) {
					return bad("%s: replica %d is not a known broker", where, r)
				}
			}
			if !slices.Contains(p.Replicas, p.Leader) {
				return bad("%s: leader %d is not one of the replicas %v", where, p.Leader, p.Replicas)
			}
			if err := ascendingPositive(p.Active); err != nil {
				return bad("%s: active: %v", where, err)
			}
			if !slices.Contains(p.Active, p.Leader) {
				return bad("%s: leader %d is not active", where, p.Leader)
			}
			for _, a := range p.Active {
				if !slices.Contains(p.Replicas, a) {
					return bad("%s: active replica %d is not assigned", where, a)
				}
			}
		}
	}
	return nil
}

// partitionWhere names a partition in a refusal of the metadata.
type partitionWhere struct {
	topic     string
	partition int
}

func (w partitionWhere) String() string {
	return fmt.Sprintf("topic %q partition %d", w.topic, w.partition)
}

// ascendingPositive checks that ids are positive and strictly ascending
// (so also distinct).
func ascendingPositive(ids []int) error {
	for i, id := range ids {
		if id < 1 {
			return fmt.Errorf("broker id %d is not positive", id)
		}
		if i > 0 && ids[i-1] >= id {
			return fmt.Errorf("%v is not strictly ascending", ids)
		}
	}
	return nil
}

// maxClusterMetaSize bounds the cluster.meta a reader accepts: far above
// what thousands of topics need, far below what could exhaust memory.
const maxClusterMetaSize = 64 << 20

// ReadClusterMeta reads and parses the cluster.meta at path, changing
// nothing: the checks Open makes, for a tool that judges a data directory.
// found is false, with no error, when the file does not exist (a cluster
// that has never stored anything). Anything else it refuses — something
// other than a regular file, a file too large, an unreadable one, a
// ParseClusterMeta refusal — is a *MetadataError naming path.
func ReadClusterMeta(fsys durable.FS, path string) (m Metadata, found bool, err error) {
	m, _, found, err = readClusterMeta(fsys, path)
	return m, found, err
}

// readClusterMeta is ReadClusterMeta that also says which version the file
// was, so Open can upgrade a version-1 file.
func readClusterMeta(fsys durable.FS, path string) (m Metadata, version int, found bool, err error) {
	data, err := durable.ReadSmallFile(fsys, path, maxClusterMetaSize)
	if errors.Is(err, fs.ErrNotExist) {
		return Metadata{}, 0, false, nil
	}
	if err != nil {
		return Metadata{}, 0, false, &MetadataError{Path: path, Reason: "cannot read", Err: err}
	}
	m, version, err = parseClusterMeta(data)
	if err != nil {
		var me *MetadataError
		if errors.As(err, &me) {
			me.Path = path
		}
		return Metadata{}, 0, false, err
	}
	return m, version, true, nil
}
