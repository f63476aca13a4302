package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"
)

// Kind is what a link opens: one session's pages or one server's index.
type Kind byte

const (
	KindSession Kind = 's'
	KindIndex   Kind = 'i'
)

// Scope is what a link grants: a session (by its key) or a server's index.
type Scope struct {
	Kind Kind
	ID   string
}

// SessionScope is the scope of one session's pages.
func SessionScope(key string) Scope { return Scope{Kind: KindSession, ID: key} }

// IndexScope is the scope of one server's index.
func IndexScope(server string) Scope { return Scope{Kind: KindIndex, ID: server} }

// A token is base64url(version ‖ kind ‖ expiry ‖ generation ‖ id ‖ mac),
// the MAC being HMAC-SHA256 under the state dir's key over everything
// before it. The scope travels inside the token, so a link names nothing
// the signature does not cover.
const (
	tokenVersion = 1
	macSize      = sha256.Size
	headerSize   = 1 + 1 + 8 + 8
	maxScopeID   = 512
)

var errBadToken = errors.New("bad token")

type claims struct {
	scope      Scope
	expires    time.Time
	generation uint64
}

func sign(key []byte, c claims) string {
	b := make([]byte, 0, headerSize+len(c.scope.ID)+macSize)
	b = append(b, tokenVersion, byte(c.scope.Kind))
	b = binary.BigEndian.AppendUint64(b, uint64(c.expires.Unix()))
	b = binary.BigEndian.AppendUint64(b, c.generation)
	b = append(b, c.scope.ID...)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(m.Sum(b))
}

// parse checks the signature (in constant time) and decodes the claims;
// expiry and generation are the caller's to check.
func parse(key []byte, tok string) (claims, error) {
	if len(tok) > base64.RawURLEncoding.EncodedLen(headerSize+maxScopeID+macSize) {
		return claims{}, errBadToken
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	if err != nil || len(b) < headerSize+macSize {
		return claims{}, errBadToken
	}
	body, sum := b[:len(b)-macSize], b[len(b)-macSize:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil), sum) {
		return claims{}, errBadToken
	}
	if body[0] != tokenVersion {
		return claims{}, errBadToken
	}
	return claims{
		scope:      Scope{Kind: Kind(body[1]), ID: string(body[headerSize:])},
		expires:    time.Unix(int64(binary.BigEndian.Uint64(body[2:10])), 0),
		generation: binary.BigEndian.Uint64(body[10:18]),
	}, nil
}
