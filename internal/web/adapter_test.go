package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Links gives the front ends what they post: a session's link, its diff
// page's, a server index's, each with when it stops working (the moment
// the page refuses it), and revokes them all.
func TestLinksAdapter(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Diffs = fakeDiffs{Diff{Patch: samplePatch, Head: "2222222"}} })
	at := func(tm time.Time) { e.clock.mu.Lock(); e.clock.now = tm; e.clock.mu.Unlock() }
	start := e.clock.Now().Add(500 * time.Millisecond) // a token counts whole seconds
	at(start)
	l := Links{H: e.h}
	ttl := DefaultLinkTTL
	for what, c := range map[string]struct {
		link func() (string, time.Time)
		page string
	}{
		"session": {func() (string, time.Time) { return l.SessionLink("proj") }, "<title>proj · ccbridge</title>"},
		"diff":    {func() (string, time.Time) { return l.DiffLink("proj") }, "main.go"},
		"index":   {func() (string, time.Time) { return l.IndexLink("home") }, "proj"},
	} {
		url, expires := c.link()
		if !strings.HasPrefix(url, "http://127.0.0.1:7878/") {
			t.Fatalf("%s: %q", what, url)
		}
		if want := e.clock.Now().Add(ttl); expires.After(want) || want.Sub(expires) >= time.Second {
			t.Errorf("%s: expires %v, want %v", what, expires, want)
		}
		target := strings.TrimPrefix(url, "http://127.0.0.1:7878")
		if w := e.get(t, target); w.Code != http.StatusOK || !strings.Contains(body(t, w), c.page) {
			t.Errorf("%s: GET %s = %d", what, target, w.Code)
		}
		at(expires.Add(-time.Second))
		if w := e.get(t, target); w.Code != http.StatusOK {
			t.Errorf("%s: a second before it expires: %d", what, w.Code)
		}
		at(expires)
		refused(t, e, target, what+" at the expiry it was given")
		at(start)
	}
	url, _ := l.SessionLink("proj")
	if err := l.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	refused(t, e, strings.TrimPrefix(url, "http://127.0.0.1:7878"), "a revoked link")
}
