package logtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Tree lists every file and directory below root as slash-separated paths
// relative to root, directories with a trailing slash, sorted. Tests use it
// to prove that a refused operation created or removed nothing.
func Tree(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out, err
}

// Snapshot returns the content of every regular file below root, keyed by
// its path, and every directory below root, keyed by its path with a
// trailing separator and a nil value. Two snapshots are equal exactly when
// no file or directory below root was created, removed or changed in
// between; tests use it to prove that bad input and refused operations leave
// the disk byte-for-byte as it was.
func Snapshot(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == root:
			return nil
		case d.IsDir():
			out[p+string(filepath.Separator)] = nil
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = b
		return err
	})
	return out, err
}
