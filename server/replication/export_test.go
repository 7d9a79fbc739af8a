package replication

// This file hands the package's external tests the two tables of
// errors.go they check entry by entry, so that an entry added without a
// test fails them.

// WireType is one entry of wireTypes: the name a typed error travels
// under, and its code.
type WireType struct{ Name, Code string }

// WireTypes returns wireTypes' entries, in order.
func WireTypes() []WireType {
	out := make([]WireType, len(wireTypes))
	for i, w := range wireTypes {
		out[i] = WireType{Name: w.name, Code: w.code}
	}
	return out
}

// Sentinel is one entry of sentinels.
type Sentinel struct {
	Name, Code string
	Err        error
}

// Sentinels returns sentinels' entries, in order.
func Sentinels() []Sentinel {
	out := make([]Sentinel, len(sentinels))
	for i, s := range sentinels {
		out[i] = Sentinel{Name: s.name, Code: s.code, Err: s.err}
	}
	return out
}
