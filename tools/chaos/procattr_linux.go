package chaos

import "syscall"

// procAttr puts a node's process in its own process group (a Ctrl-C of
// the suite does not reach it before the suite stops it) and has Linux
// kill it when the suite dies, even of a panic or SIGKILL.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
