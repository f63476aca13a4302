package state

import (
	"context"
	"crypto/rand"
	"fmt"
)

// WebKeySize is the length of the web view's signing key: 32 bytes, the
// block size HMAC-SHA256 is keyed with.
const WebKeySize = 32

// WebLinks is what signs and revokes the web view's links. It lives in the
// durable state directory: a link posted yesterday stays valid across a
// restart, and a revocation stays in force.
type WebLinks struct {
	Key        []byte `json:"key"`
	Generation uint64 `json:"generation"` // links of an older generation are revoked
}

// WebLinkStore keeps the one WebLinks record.
type WebLinkStore struct {
	c *Collection[WebLinks]
}

const webLinksKey = "links"

// OpenWebLinks opens the web links record in d (the durable directory).
func OpenWebLinks(d *Dir) (*WebLinkStore, error) {
	c, err := newCollection[WebLinks](d, "web", registryVersion)
	if err != nil {
		return nil, err
	}
	return &WebLinkStore{c: c}, nil
}

// Load returns the record, creating the key the first time (under the
// collection's lock, so two processes never make two keys).
func (s *WebLinkStore) Load(ctx context.Context) (WebLinks, error) {
	if v, err := s.c.Get(webLinksKey); err == nil && len(v.Key) == WebKeySize {
		return v, nil
	}
	return s.c.Update(ctx, webLinksKey, func(v *WebLinks) error {
		if len(v.Key) == WebKeySize {
			return nil
		}
		v.Key = make([]byte, WebKeySize)
		if _, err := rand.Read(v.Key); err != nil {
			return fmt.Errorf("make web key: %w", err)
		}
		return nil
	})
}

// Revoke bumps the generation, revoking every link made before.
func (s *WebLinkStore) Revoke(ctx context.Context) (WebLinks, error) {
	if _, err := s.Load(ctx); err != nil {
		return WebLinks{}, err
	}
	return s.c.Update(ctx, webLinksKey, func(v *WebLinks) error {
		v.Generation++
		return nil
	})
}
