package cli

import "os"

// isTerminal reports whether w is an *os.File attached to a character
// device, which is how a terminal looks to a process. Pipes and files are
// not.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
