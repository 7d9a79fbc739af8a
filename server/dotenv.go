package server

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// dotEnvEntry is one KEY=VALUE assignment read from a .env file.
type dotEnvEntry struct {
	Key   string
	Value string
	Line  int
}

// readDotEnv reads the .env file at path. A missing file is not an error: it
// yields no entries. Any other read error, or a malformed line, is returned.
func readDotEnv(path string) ([]dotEnvEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := parseDotEnv(data)
	var de *DotEnvError
	if errors.As(err, &de) {
		de.Path = path
	}
	return entries, err
}

// parseDotEnv parses the small .env dialect PyStream accepts, one assignment
// per line:
//
//	# a comment line
//	KEY=value            # unquoted; a " #" starts a trailing comment
//	export KEY=value     # an optional "export " is ignored
//	KEY="a \"quoted\" value\n"   # double quotes: \" \\ \n \t \r escapes
//	KEY='literal $value'         # single quotes: taken literally
//	KEY=                 # empty value
//
// Keys are letters, digits and underscores, not starting with a digit. Blank
// lines are skipped, surrounding spaces are trimmed, and a later assignment
// of the same key replaces an earlier one (as in a shell). Quoted values end
// on the same line. Anything else is reported as a *DotEnvError naming the
// line, and no entries are returned.
func parseDotEnv(data []byte) ([]dotEnvEntry, error) {
	var entries []dotEnvEntry
	for i, raw := range strings.Split(string(data), "\n") {
		lineNo := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export "); ok {
			line = strings.TrimSpace(rest)
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, &DotEnvError{Line: lineNo, Reason: "want KEY=VALUE"}
		}
		key = strings.TrimSpace(key)
		if !validEnvKey(key) {
			return nil, &DotEnvError{Line: lineNo, Reason: "invalid variable name " + quoteForMessage(key) + ": want letters, digits and _, not starting with a digit"}
		}
		value, reason := parseDotEnvValue(strings.TrimSpace(value))
		if reason != "" {
			return nil, &DotEnvError{Line: lineNo, Reason: reason}
		}
		entries = append(entries, dotEnvEntry{Key: key, Value: value, Line: lineNo})
	}
	return entries, nil
}

// parseDotEnvValue decodes the part after "=" (already trimmed). It returns
// the value, or a non-empty reason when the value is malformed.
func parseDotEnvValue(s string) (value, reason string) {
	if s == "" {
		return "", ""
	}
	switch s[0] {
	case '\'':
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", "unterminated single-quoted value"
		}
		if !onlyComment(s[1+end+1:]) {
			return "", "unexpected text after closing quote"
		}
		return s[1 : 1+end], ""
	case '"':
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '"':
				if !onlyComment(s[i+1:]) {
					return "", "unexpected text after closing quote"
				}
				return b.String(), ""
			case c == '\\' && i+1 < len(s):
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				case '"', '\\':
					b.WriteByte(s[i])
				default:
					// An unknown escape stays as written.
					b.WriteByte('\\')
					b.WriteByte(s[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", "unterminated double-quoted value"
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "\t#"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s), ""
}

// onlyComment reports whether rest (what follows a closing quote) is empty
// or whitespace followed by a comment.
func onlyComment(rest string) bool {
	rest = strings.TrimSpace(rest)
	return rest == "" || strings.HasPrefix(rest, "#")
}

// validEnvKey reports whether k is a portable environment variable name.
func validEnvKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// quoteForMessage quotes s for an error message, cutting very long input.
func quoteForMessage(s string) string {
	const limit = 40
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return strconv.Quote(s)
}
