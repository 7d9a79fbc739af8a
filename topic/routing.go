package topic

import (
	"crypto/sha256"
	"math/big"
)

// PartitionForKey maps a key to a partition: the whole 32-byte SHA-256
// digest of the key, read as one big-endian unsigned integer, modulo the
// partition count. It depends on the key's bytes alone, so a key lands on
// the same partition in every process and after every restart. An empty
// key is a key like any other.
//
// partitionCount must be at least 1. A smaller count is a programmer error
// and panics, as rand.Intn does for n <= 0: every count a Topic uses has
// been validated by Open, so no user input reaches this function unchecked.
func PartitionForKey(key []byte, partitionCount int) int {
	if partitionCount < 1 {
		panic("topic: PartitionForKey with partitionCount < 1")
	}
	sum := sha256.Sum256(key)
	return digestMod(sum, partitionCount)
}

// maxFastModulus bounds the moduli digestMod reduces with machine integers:
// r < m and r*256 + 255 must fit in a uint64.
const maxFastModulus = 1 << 55

// digestMod returns the 256-bit big-endian number sum modulo m (m >= 1).
// For every realistic partition count it folds the digest in one byte at a
// time (Horner's rule: r = (r*256 + b) mod m), which needs no allocation and
// gives exactly the value of the big-integer division it replaces.
func digestMod(sum [sha256.Size]byte, m int) int {
	if uint64(m) >= maxFastModulus {
		var n, d big.Int
		n.SetBytes(sum[:])
		d.SetUint64(uint64(m))
		return int(n.Mod(&n, &d).Uint64())
	}
	mod := uint64(m)
	var r uint64
	for _, b := range sum {
		r = (r<<8 | uint64(b)) % mod
	}
	return int(r)
}

// route decides the partition of one record. A nil key takes the partition
// the round-robin cursor value rr names; any other key, the empty one
// included, is hashed.
func route(key []byte, partitionCount int, rr uint64) int {
	if key == nil {
		return int(rr % uint64(partitionCount))
	}
	return PartitionForKey(key, partitionCount)
}
