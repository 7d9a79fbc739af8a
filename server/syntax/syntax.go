package syntax

import (
	"net"
	"strconv"
	"strings"
	"unicode/utf8"
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

// MaxQuoted is how many bytes of a client's name or value an error message
// or log line quotes; the rest is replaced by a marker saying how much.
const MaxQuoted = 64

// Quote is s as %q writes it, cut to MaxQuoted bytes (at a rune boundary)
// with a marker when longer: `"aaaa"… (1048576 bytes)`. Every name or
// value a client sent that an error or a log line quotes goes through it,
// over HTTP as over Kafka, so that a megabyte-long name is never echoed
// back in full and a control character never reaches a log unescaped.
func Quote(s string) string {
	head, cut := clipped(s)
	if !cut {
		return strconv.Quote(s)
	}
	return strconv.Quote(head) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Clip is s cut as Quote cuts it, without the quotes: for text a library
// wrote around a client's value (a decoder's message, a number).
func Clip(s string) string {
	head, cut := clipped(s)
	if !cut {
		return s
	}
	return head + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// clipped is the first MaxQuoted bytes of s, cut at a rune boundary, and
// whether anything was cut.
func clipped(s string) (string, bool) {
	if len(s) <= MaxQuoted {
		return s, false
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
