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

// SealedMemory is the memory the log keeps for its sealed segments once
// every one has been read (each thin index loaded, the most it keeps): the
// thin indexes plus a fixed cost per segment, in bytes.
func SealedMemory(l *Log) (bytes, sealedBytes int64, err error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	for _, s := range l.sealed {
		thin, ierr := s.index(l)
		if ierr != nil {
			return 0, 0, ierr
		}
		bytes += int64(cap(thin))*8 + sealedSegmentOverhead + int64(len(s.path))
		sealedBytes += s.size
	}
	return bytes, sealedBytes, nil
}

// IndexLoaded reports, per sealed segment, whether its thin index is in
// memory yet.
func IndexLoaded(l *Log) []bool {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	var out []bool
	for _, s := range l.sealed {
		s.idxMu.Lock()
		out = append(out, s.loaded)
		s.idxMu.Unlock()
	}
	return out
}

// sealedSegmentOverhead approximates a sealedSegment and its open file.
const sealedSegmentOverhead = 256
