package client

import "github.com/pystream/pystream/log/durable"

// OffsetStoreOptions tune OpenOffsetStoreWithOptions. The zero value is
// ready to use: every zero field means its default, named on the field.
type OffsetStoreOptions struct {
	// FS is the file system. Nil means durable.OS.
	FS durable.FS
}

// withDefaults returns o with every zero field set to its default.
// OpenOffsetStoreWithOptions calls it once, on entry.
func (o OffsetStoreOptions) withDefaults() OffsetStoreOptions {
	if o.FS == nil {
		o.FS = durable.OS
	}
	return o
}
