package chat

import (
	"errors"
	"fmt"
	"strings"
)

// ID is what a component's custom_id carries: which ccbridge instance made
// it (so daemons on several machines can share a bot and each ignores the
// others' cards), what kind of action it is, and its arguments (a session
// key, a request id, a choice).
type ID struct {
	Instance string
	Kind     string
	Args     []string
}

// idVersion prefixes every custom_id; a format change bumps it so old
// buttons decode as unknown instead of as something else.
const idVersion = "cb1"

// MaxIDLen is Discord's custom_id limit.
const MaxIDLen = 100

// idPart reports whether s uses only the characters a custom_id part may hold.
func idPart(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '@' || c == '-') {
			return false
		}
	}
	return true
}

// ErrBadID is returned for a custom_id that is not ccbridge's or is malformed.
var ErrBadID = errors.New("not a ccbridge custom_id")

// Encode renders the id as "cb1|instance|kind|arg|…". Parts may use letters,
// digits and _ . @ - only, so the separator can never appear inside one.
func (id ID) Encode() (string, error) {
	parts := append([]string{idVersion, id.Instance, id.Kind}, id.Args...)
	for _, p := range parts[1:3] {
		if p == "" {
			return "", fmt.Errorf("custom_id: empty instance or kind")
		}
	}
	for _, p := range parts {
		if !idPart(p) {
			return "", fmt.Errorf("custom_id: %q has characters outside [A-Za-z0-9_.@-]", p)
		}
	}
	s := strings.Join(parts, "|")
	if len(s) > MaxIDLen {
		return "", fmt.Errorf("custom_id: %d characters, Discord allows %d", len(s), MaxIDLen)
	}
	return s, nil
}

// DecodeID parses a custom_id made by Encode.
func DecodeID(s string) (ID, error) {
	if len(s) > MaxIDLen {
		return ID{}, ErrBadID
	}
	parts := strings.Split(s, "|")
	if len(parts) < 3 || parts[0] != idVersion || parts[1] == "" || parts[2] == "" {
		return ID{}, ErrBadID
	}
	for _, p := range parts {
		if !idPart(p) {
			return ID{}, ErrBadID
		}
	}
	return ID{Instance: parts[1], Kind: parts[2], Args: parts[3:]}, nil
}
