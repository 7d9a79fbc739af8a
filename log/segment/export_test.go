package segment

// The exported helpers below exist only for the package's tests.

// ParseAndReencodeSidecar exposes the sidecar codec to the fuzz test:
// parse, and re-encode what parsed.
func ParseAndReencodeSidecar(b []byte) ([]byte, error) {
	s, err := parseSidecar(b)
	if err != nil {
		return nil, err
	}
	return encodeSidecar(nil, s), nil
}

// SealedMemory is the memory the log keeps for its sealed segments: the
// thin indexes plus a fixed cost per segment, in bytes.
func SealedMemory(l *Log) (bytes, sealedBytes int64) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	for _, s := range l.sealed {
		bytes += int64(cap(s.thin))*8 + sealedSegmentOverhead + int64(len(s.path))
		sealedBytes += s.size
	}
	return bytes, sealedBytes
}

// sealedSegmentOverhead approximates a sealedSegment and its open file.
const sealedSegmentOverhead = 256
