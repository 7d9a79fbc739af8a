package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// This file keeps what a consumer group's coordinator saves of each group
// so that the next coordinator knows which partitions a member of the one
// before may still be reading (the server's package group: its leases,
// opaque here). It lives beside the committed offsets, in the same store
// and through the same path: in one process a file per group under
// <root>/groups, in cluster mode the replicated state (MetaState.Groups,
// OpSaveGroupLeases).

// MaxGroupLeases bounds one group's saved leases, in bytes: a group of
// the most members (1000) each holding a few partitions fits well.
const MaxGroupLeases = 1 << 20

// GroupLeasesSuffix ends the name of a group's leases file:
// <root>/groups/<group>.leases.
const GroupLeasesSuffix = ".leases"

// checkGroupLeases checks a save: a valid group id (a consumer id) and
// leases within MaxGroupLeases.
func checkGroupLeases(group string, leases []byte) error {
	if err := topic.ValidateName(group); err != nil {
		return fmt.Errorf("cluster: save group leases: group id: %w", err)
	}
	if len(leases) > MaxGroupLeases {
		return fmt.Errorf("cluster: save group leases of %q: %d bytes, at most %d: %w", group, len(leases), MaxGroupLeases, ErrInvalidArgument)
	}
	return nil
}

// SaveGroupLeases durably replaces what consumer group group's coordinator
// keeps of it across restarts; nil leases remove it.
func (c *Cluster) SaveGroupLeases(group string, leases []byte) error {
	if err := checkGroupLeases(group, leases); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	return c.store.SaveGroupLeases(ctx, group, leases)
}

// GroupLeases is every group's saved leases, by group id.
func (c *Cluster) GroupLeases() (map[string][]byte, error) { return c.store.GroupLeases() }

// groupsDir is where the groups' leases live: <root>/groups.
func (f *fileStore) groupsDir() string { return filepath.Join(f.root, "groups") }

// SaveGroupLeases writes <root>/groups/<group>.leases atomically (temp
// file, fsync, rename, directory fsync), or removes it, durably.
func (f *fileStore) SaveGroupLeases(ctx context.Context, group string, leases []byte) error {
	if err := checkGroupLeases(group, leases); err != nil {
		return err
	}
	f.groupsMu.Lock()
	defer f.groupsMu.Unlock()
	path := filepath.Join(f.groupsDir(), group+GroupLeasesSuffix)
	if leases == nil {
		if err := f.fsys.Remove(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("cluster: remove leases of group %q: %w", group, err)
		}
		if err := durable.SyncDir(f.fsys, f.groupsDir()); err != nil {
			return fmt.Errorf("cluster: remove leases of group %q: %w", group, err)
		}
		return nil
	}
	if !f.groupsMade {
		if _, err := durable.MkdirAll(f.fsys, f.groupsDir()); err != nil {
			return fmt.Errorf("cluster: save leases of group %q: %w", group, err)
		}
		f.groupsMade = true
	}
	if err := durable.WriteFile(f.fsys, path, leases); err != nil {
		return fmt.Errorf("cluster: save leases of group %q: %w", group, err)
	}
	return nil
}

// GroupLeases reads every <root>/groups/<group>.leases; a leftover temp
// file of an interrupted write is not one.
func (f *fileStore) GroupLeases() (map[string][]byte, error) {
	f.groupsMu.Lock()
	defer f.groupsMu.Unlock()
	entries, err := f.fsys.ReadDir(f.groupsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: read group leases: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		group, ok := strings.CutSuffix(e.Name(), GroupLeasesSuffix)
		if !ok || e.IsDir() || topic.ValidateName(group) != nil {
			continue
		}
		data, err := durable.ReadSmallFile(f.fsys, filepath.Join(f.groupsDir(), e.Name()), MaxGroupLeases)
		if err != nil {
			return nil, fmt.Errorf("cluster: read leases of group %q: %w", group, err)
		}
		out[group] = data
	}
	return out, nil
}

// saveGroupLeases applies OpSaveGroupLeases.
func (s *MetaState) saveGroupLeases(c MetaCommand) (MetaResult, error) {
	if err := checkGroupLeases(c.Consumer, c.Leases); err != nil {
		return MetaResult{}, err
	}
	if len(c.Leases) == 0 {
		delete(s.Groups, c.Consumer)
		return MetaResult{Summary: fmt.Sprintf("group %q: leases removed", c.Consumer)}, nil
	}
	if s.Groups == nil {
		s.Groups = map[string][]byte{}
	}
	s.Groups[c.Consumer] = append([]byte(nil), c.Leases...)
	return MetaResult{Summary: fmt.Sprintf("group %q: leases saved", c.Consumer)}, nil
}

// cloneGroups is a deep copy of groups; nil stays nil.
func cloneGroups(groups map[string][]byte) map[string][]byte {
	if groups == nil {
		return nil
	}
	out := maps.Clone(groups)
	for k, v := range out {
		out[k] = append([]byte(nil), v...)
	}
	return out
}
