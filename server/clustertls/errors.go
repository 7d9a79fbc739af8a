package clustertls

import (
	"errors"
	"fmt"
)

// The errors of the package. A refused peer's error wraps one of the first
// five; Load's a *FileError.
var (
	// ErrNoCertificate: the peer presented no certificate.
	ErrNoCertificate = errors.New("clustertls: the peer presented no certificate")
	// ErrUntrusted: the peer's certificate is not signed by the cluster
	// CA, has expired, or is not valid for both ends of a connection.
	ErrUntrusted = errors.New("clustertls: the certificate is not one of the cluster CA's node certificates")
	// ErrNoNodeID: the certificate names no node id (or more than one).
	ErrNoNodeID = errors.New("clustertls: the certificate names no node id")
	// ErrNotMember: the peer's node id is not a member of the cluster.
	ErrNotMember = errors.New("clustertls: the peer is not a member of the cluster")
	// ErrWrongNode: the node reached presents another id than the one
	// dialed.
	ErrWrongNode = errors.New("clustertls: the peer is not the node that was dialed")
	// ErrKeyMismatch: a key file does not hold the certificate's key.
	ErrKeyMismatch = errors.New("clustertls: the key does not match the certificate")
)

// FileError is a file Load or WriteDir could not use: which of the three,
// its path and why.
type FileError struct {
	// Which is "certificate", "key" or "CA".
	Which string
	// Path is the file.
	Path string
	// Err is the cause.
	Err error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("clustertls: %s file %s: %v", e.Which, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }
