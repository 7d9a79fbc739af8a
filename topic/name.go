package topic

import "fmt"

// MaxNameLength is the longest topic name (and consumer id) accepted.
const MaxNameLength = 249

// ValidateName checks a topic name or consumer id: 1 to 249 characters of
// A-Z a-z 0-9 '.' '_' '-', and never "." or "..". Such a name can never
// escape the directory it is joined to. The error wraps ErrInvalidName.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic: empty name: %w", ErrInvalidName)
	case len(name) > MaxNameLength:
		return fmt.Errorf("topic: name of %d characters, at most %d: %w", len(name), MaxNameLength, ErrInvalidName)
	case name == "." || name == "..":
		return fmt.Errorf("topic: name %q: %w", name, ErrInvalidName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("topic: name %q: character %q at %d is not one of A-Z a-z 0-9 . _ -: %w", name, c, i, ErrInvalidName)
		}
	}
	return nil
}
