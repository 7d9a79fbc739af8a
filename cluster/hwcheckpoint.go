package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// HWCheckpointFileName is the high-watermark checkpoint inside the cluster
// root: the watermark of every partition as a clean Close left it.
const HWCheckpointFileName = "hw.checkpoint"

// HWCheckpointVersion is the hw.checkpoint version this package writes and
// reads.
const HWCheckpointVersion = 1

// maxHWCheckpointSize bounds the hw.checkpoint a reader accepts, as
// maxClusterMetaSize bounds cluster.meta.
const maxHWCheckpointSize = 64 << 20

// HWCheckpointPath is the high-watermark checkpoint file.
func (c *Cluster) HWCheckpointPath() string { return filepath.Join(c.root, HWCheckpointFileName) }

// EncodeHWCheckpoint renders the high watermarks of every topic, by
// partition, as hw.checkpoint: JSON with one topic per line, topics in name
// order, a trailing newline:
//
//	{
//	  "version": 1,
//	  "topics": {
//	    "orders": [4, 2, 2]
//	  }
//	}
//
// It refuses what ParseHWCheckpoint would refuse (an invalid topic name, a
// topic without partitions).
func EncodeHWCheckpoint(hws map[string][]uint64) ([]byte, error) {
	if err := validateHWCheckpoint(hws); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"version\": %d,\n  \"topics\": {", HWCheckpointVersion)
	for i, name := range slices.Sorted(maps.Keys(hws)) {
		if i > 0 {
			b.WriteString(",")
		}
		quoted, err := json.Marshal(name)
		if err != nil {
			return nil, fmt.Errorf("cluster: encode high-watermark checkpoint: %w", err)
		}
		parts := make([]string, len(hws[name]))
		for p, hw := range hws[name] {
			parts[p] = strconv.FormatUint(hw, 10)
		}
		fmt.Fprintf(&b, "\n    %s: [%s]", quoted, strings.Join(parts, ", "))
	}
	if len(hws) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes(), nil
}

// ParseHWCheckpoint decodes and validates hw.checkpoint. Anything it does
// not accept is an *HWCheckpointError (with an empty Path): a repeated key
// at any level (durable.ObjectFields), an unknown or missing field, a null,
// trailing data, another version, an invalid topic name, a topic without
// partitions, or a watermark that is not a JSON integer from 0 to 2^64-1.
func ParseHWCheckpoint(data []byte) (map[string][]uint64, error) {
	top, err := durable.ObjectFields(data)
	if err != nil {
		return nil, hwCheckpointObjectError("", err)
	}
	for _, name := range []string{"version", "topics"} {
		if v, ok := top[name]; !ok || string(v) == "null" {
			return nil, &HWCheckpointError{Reason: fmt.Sprintf("missing field %q", name)}
		}
	}
	if key, ok := durable.UnknownField(top, "version", "topics"); ok {
		return nil, &HWCheckpointError{Reason: fmt.Sprintf("unknown field %q", key)}
	}
	var version int
	if err := json.Unmarshal(top["version"], &version); err != nil {
		return nil, &HWCheckpointError{Reason: `field "version"`, Err: err}
	}
	if version != HWCheckpointVersion {
		return nil, &HWCheckpointError{Reason: fmt.Sprintf("unsupported version %d, want %d", version, HWCheckpointVersion)}
	}
	topics, err := durable.ObjectFields(top["topics"])
	if err != nil {
		return nil, hwCheckpointObjectError(`field "topics": `, err)
	}
	hws := make(map[string][]uint64, len(topics))
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		var list []uint64
		if err := json.Unmarshal(topics[name], &list); err != nil || list == nil {
			return nil, &HWCheckpointError{Reason: fmt.Sprintf("topic %q: want a list of watermarks", name), Err: err}
		}
		hws[name] = list
	}
	if err := validateHWCheckpoint(hws); err != nil {
		return nil, err
	}
	return hws, nil
}

// validateHWCheckpoint checks what the JSON shape cannot.
func validateHWCheckpoint(hws map[string][]uint64) error {
	for _, name := range slices.Sorted(maps.Keys(hws)) {
		if err := topic.ValidateName(name); err != nil {
			return &HWCheckpointError{Reason: fmt.Sprintf("topic %q", name), Err: err}
		}
		if len(hws[name]) == 0 {
			return &HWCheckpointError{Reason: fmt.Sprintf("topic %q: no partitions", name)}
		}
	}
	return nil
}

// hwCheckpointObjectError turns durable.ObjectFields' refusal into an
// *HWCheckpointError.
func hwCheckpointObjectError(where string, err error) error {
	reason, cause := objectRefusal(where, err)
	return &HWCheckpointError{Reason: reason, Err: cause}
}

// takeHWCheckpoint reads the checkpoint a clean Close left, seeds the high
// watermark of every partition it names (of a topic with the same partition
// count; other entries are ignored), and removes the file durably before
// the cluster is used: a checkpoint speaks for the moment of the Close that
// wrote it, and a later process that crashes must not find it, since topics
// may have been deleted and re-created in between
// (docs/design.md § High watermark). A damaged file is refused and left
// untouched. Called by Open before the cluster is shared.
func (c *Cluster) takeHWCheckpoint() error {
	path := c.HWCheckpointPath()
	if err := durable.RemoveTemp(c.opts.FS, path); err != nil {
		return err
	}
	data, err := durable.ReadSmallFile(c.opts.FS, path, maxHWCheckpointSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &HWCheckpointError{Path: path, Reason: "cannot read", Err: err}
	}
	hws, err := ParseHWCheckpoint(data)
	if err != nil {
		var he *HWCheckpointError
		if errors.As(err, &he) {
			he.Path = path
		}
		return err
	}
	if err := c.opts.FS.Remove(path); err != nil {
		return fmt.Errorf("cluster: remove %s: %w", path, err)
	}
	if err := durable.SyncDir(c.opts.FS, c.root); err != nil {
		return err
	}
	for name, list := range hws {
		t, ok := c.topics[name]
		if !ok || len(t.parts) != len(list) {
			continue
		}
		for i, p := range t.parts {
			p.hw.Set(list[i])
		}
	}
	return nil
}

// writeHWCheckpoint refreshes and records the high watermark of every
// partition of topics in hw.checkpoint, for the next Open. Close calls it
// while the brokers are still open. Nothing is written for a cluster
// without topics.
func (c *Cluster) writeHWCheckpoint(topics map[string]*topicState) error {
	if len(topics) == 0 {
		return nil
	}
	hws := make(map[string][]uint64, len(topics))
	for name, t := range topics {
		list := make([]uint64, len(t.parts))
		for i, p := range t.parts {
			list[i] = c.refreshHW(p)
		}
		hws[name] = list
	}
	data, err := EncodeHWCheckpoint(hws)
	if err != nil {
		return err
	}
	if err := durable.WriteFile(c.opts.FS, c.HWCheckpointPath(), data); err != nil {
		return fmt.Errorf("cluster: write high-watermark checkpoint: %w", err)
	}
	return nil
}
