package group

import (
	"errors"
	"testing"
)

// A group speaks one protocol at a time: the other kind is refused while
// it has members, and welcome once they have left.
func TestRegistryOneProtocolAtATime(t *testing.T) {
	r := NewRegistry()
	if err := r.Claim("g", Classic); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := r.Claim("g", Classic); err != nil {
		t.Fatalf("same protocol again: %v", err)
	}
	var mismatch *ProtocolMismatchError
	if err := r.Claim("g", Consumer); !errors.As(err, &mismatch) || mismatch.Has != Classic || mismatch.Want != Consumer {
		t.Fatalf("other protocol: got %v, want a ProtocolMismatchError from classic to consumer", err)
	}
	r.Release("g", Consumer) // not its protocol: changes nothing
	if p, ok := r.Protocol("g"); !ok || p != Classic {
		t.Fatalf("after a foreign release: protocol %q %v, want classic", p, ok)
	}
	r.Release("g", Classic)
	if _, ok := r.Protocol("g"); ok {
		t.Fatal("released group still has a protocol")
	}
	if err := r.Claim("g", Consumer); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
}

// A commit without membership is refused while the group has members of
// either protocol, and accepted once it has none.
func TestRegistryUnmanagedCommit(t *testing.T) {
	r := NewRegistry()
	if err := r.Unmanaged("g"); err != nil {
		t.Fatalf("no members: %v", err)
	}
	for _, p := range []Protocol{Classic, Consumer} {
		if err := r.Claim("g", p); err != nil {
			t.Fatal(err)
		}
		if err := r.Unmanaged("g"); !errors.Is(err, ErrManaged) {
			t.Fatalf("%s members: got %v, want ErrManaged", p, err)
		}
		r.Release("g", p)
	}
	if err := r.Unmanaged("g"); err != nil {
		t.Fatalf("members gone: %v", err)
	}
}

// A group whose offsets are being deleted is held: a member of either
// protocol that would join it meanwhile is refused with ErrDeleting, and
// so is a second delete; a group with members cannot be held. Once
// released, members join again.
func TestRegistryHoldForDelete(t *testing.T) {
	r := NewRegistry()
	release, err := r.Hold("g")
	if err != nil {
		t.Fatalf("hold: %v", err)
	}
	for _, p := range []Protocol{Classic, Consumer} {
		if err := r.Claim("g", p); !errors.Is(err, ErrDeleting) {
			t.Fatalf("%s claim while held: got %v, want ErrDeleting", p, err)
		}
	}
	if _, err := r.Hold("g"); !errors.Is(err, ErrDeleting) {
		t.Fatalf("second hold: got %v, want ErrDeleting", err)
	}
	release()
	if err := r.Claim("g", Consumer); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	if _, err := r.Hold("g"); !errors.Is(err, ErrManaged) {
		t.Fatalf("hold of a group with members: got %v, want ErrManaged", err)
	}
}
