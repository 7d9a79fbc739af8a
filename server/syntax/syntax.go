package syntax

import (
	"net"
	"strings"
)

// ValidHost accepts IP literals and DNS-style host names.
func ValidHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// ValidAddr reports whether s is host:port with a valid host and port.
func ValidAddr(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || !ValidHost(host) {
		return false
	}
	return validPort(port)
}

// validPort reports whether s is a decimal port from 1 to 65535: digits
// only (leading zeros allowed), no sign or space.
func validPort(s string) bool {
	if s == "" {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = min(n*10+int(s[i]-'0'), 65536) // past the range stays past it
	}
	return n >= 1 && n <= 65535
}

// Printable reports whether s has no control characters.
func Printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
