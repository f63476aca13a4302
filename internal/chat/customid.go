package chat

import (
	"crypto/sha256"
	"encoding/base32"
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
	// Names may be long (a thread's session key of long server and project
	// names passes 100): hash the longest arguments until the id fits.
	// Whoever reads the id matches them with ArgIs.
	for n := len(strings.Join(parts, "|")); n > MaxIDLen; n = len(strings.Join(parts, "|")) {
		longest := -1
		for i := 3; i < len(parts); i++ {
			if len(parts[i]) > hashedLen && (longest < 0 || len(parts[i]) > len(parts[longest])) {
				longest = i
			}
		}
		if longest < 0 {
			return "", fmt.Errorf("custom_id: %d characters, Discord allows %d", n, MaxIDLen)
		}
		parts[longest] = hashArg(parts[longest])
	}
	return strings.Join(parts, "|"), nil
}

// hashedPrefix starts an argument that was hashed to fit; no name or key
// ccbridge puts into an id starts with '@'.
const hashedPrefix = "@h"

// hashedLen is the length of a hashed argument: 120 bits of SHA-256.
const hashedLen = len(hashedPrefix) + 24

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func hashArg(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hashedPrefix + strings.ToLower(b32.EncodeToString(sum[:]))[:hashedLen-len(hashedPrefix)]
}

// ArgIs reports whether an argument decoded from a custom_id stands for
// value: it is value, or value's hash when value did not fit.
func ArgIs(arg, value string) bool {
	return arg == value || strings.HasPrefix(arg, hashedPrefix) && arg == hashArg(value)
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
