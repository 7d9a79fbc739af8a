package topic

import (
	"crypto/sha256"
	"math/big"
)

// PartitionForKey maps a key to a partition: the whole 32-byte SHA-256
// digest of the key, read as one big-endian unsigned integer, modulo the
// partition count. It depends on the key's bytes alone, so a key lands on
// the same partition in every process and after every restart. An empty
// key is a key like any other. partitionCount must be at least 1.
func PartitionForKey(key []byte, partitionCount int) int {
	if partitionCount < 1 {
		panic("topic: PartitionForKey with partitionCount < 1")
	}
	sum := sha256.Sum256(key)
	var n, m big.Int
	n.SetBytes(sum[:])
	m.SetInt64(int64(partitionCount))
	return int(n.Mod(&n, &m).Int64())
}
