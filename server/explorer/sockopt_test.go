package explorer

import (
	"syscall"
)

// smallReceiveBuffer shrinks a test client's receive buffer, so that a
// client that never reads fills it at once.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = setReceiveBuffer(fd, 4096)
	})
	if err != nil {
		return err
	}
	return serr
}
