//go:build !unix

package cli

import "errors"

// tryLock cannot check a server's lock without flock(2), so it refuses
// rather than risk repairing a log a server has open.
func tryLock(path string) (release func(), held bool, err error) {
	return nil, false, errors.New("cli: cannot check the data directory lock on this platform")
}
