package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// refused asserts a 403 whose body says nothing but that.
func refused(t *testing.T, e *env, target, why string) {
	t.Helper()
	w := e.get(t, target)
	if w.Code != http.StatusForbidden || body(t, w) != "forbidden\n" {
		t.Errorf("%s: GET %s = %d %q, want 403 \"forbidden\\n\"", why, target, w.Code, body(t, w))
	}
}

func TestLinkOpensItsSession(t *testing.T) {
	e := newEnv(t)
	w := e.get(t, e.path(SessionScope("proj")))
	if w.Code != http.StatusOK || !strings.Contains(body(t, w), "<title>proj · ccbridge</title>") {
		t.Fatalf("session link = %d %q", w.Code, body(t, w))
	}
}

func TestTamperedLinkRefused(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	tok := strings.Split(p, "/")[2]
	for i := range tok {
		c := byte('A')
		if tok[i] == 'A' {
			c = 'B'
		}
		bad := tok[:i] + string(c) + tok[i+1:]
		refused(t, e, "/s/"+bad+"/", "token with byte "+string(rune('0'+i%10))+" changed")
	}
	refused(t, e, "/s/"+tok[:len(tok)-1]+"/", "truncated token")
	refused(t, e, "/s/"+tok+"AA/", "extended token")
	refused(t, e, "/s//", "empty token")
	refused(t, e, "/", "root")
	refused(t, e, "/s/", "no token")
	// A token signed with another key (another installation's).
	other := newEnv(t)
	refused(t, e, other.path(SessionScope("proj")), "token from another key")
}

func TestExpiredLinkRefused(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	e.clock.Add(DefaultLinkTTL - time.Second)
	if w := e.get(t, p); w.Code != http.StatusOK {
		t.Fatalf("link a second before it expires = %d", w.Code)
	}
	e.clock.Add(time.Second)
	refused(t, e, p, "expired link")
	refused(t, e, p+"diff", "expired link's diff")
}

func TestRevokedLinkRefused(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	idx := e.path(IndexScope("home"))
	if err := e.h.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	refused(t, e, p, "revoked session link")
	refused(t, e, idx, "revoked index link")
	if w := e.get(t, e.path(SessionScope("proj"))); w.Code != http.StatusOK {
		t.Fatalf("a link made after the revocation = %d, want 200", w.Code)
	}
	// The revocation survives a restart: a new handler on the same state.
	again, err := New(e.h.opt)
	if err != nil {
		t.Fatal(err)
	}
	e.h = again
	refused(t, e, p, "revoked link after a restart")
}

func TestWrongScopeRefused(t *testing.T) {
	e := newEnv(t)
	sess := strings.Split(e.path(SessionScope("proj")), "/")[2]
	idx := strings.Split(e.path(IndexScope("home")), "/")[2]
	refused(t, e, "/i/"+sess+"/", "session token on the index route")
	refused(t, e, "/s/"+idx+"/", "index token on a session route")
	refused(t, e, "/s/"+idx+"/files/", "index token on the files route")
	refused(t, e, "/x/"+sess+"/", "unknown route")
	// An index lists only its own server's sessions.
	w := e.get(t, e.path(IndexScope("home")))
	if b := body(t, w); w.Code != http.StatusOK || !strings.Contains(b, ">proj</a>") || strings.Contains(b, ">other</a>") {
		t.Fatalf("index of home = %d %q; want proj and not other", w.Code, b)
	}
}

func TestIndexLinksOpenSessions(t *testing.T) {
	e := newEnv(t)
	ip := e.path(IndexScope("home"))
	b := body(t, e.get(t, ip))
	i := strings.Index(b, `href="../../s/`)
	if i < 0 {
		t.Fatalf("index has no session link: %q", b)
	}
	rel := b[i+len(`href="../..`):]
	rel = rel[:strings.IndexByte(rel, '"')]
	if w := e.get(t, rel); w.Code != http.StatusOK || !strings.Contains(body(t, w), "<title>proj") {
		t.Fatalf("session link from the index = %d", w.Code)
	}
	// It expires with the index link.
	e.clock.Add(DefaultLinkTTL)
	refused(t, e, rel, "session link from an expired index")
}

func TestLinkBase(t *testing.T) {
	e := newEnv(t)
	if l := e.h.Link(SessionScope("proj"), 0); !strings.HasPrefix(l, "http://127.0.0.1:7878/s/") {
		t.Errorf("link without public_url = %q", l)
	}
	p := newEnv(t, func(o *Options) { o.PublicURL = "https://box.tailnet.ts.net/ccb/" })
	if l := p.h.Link(IndexScope("home"), time.Hour); !strings.HasPrefix(l, "https://box.tailnet.ts.net/ccb/i/") || !strings.HasSuffix(l, "/") {
		t.Errorf("link with public_url = %q", l)
	}
}

// TestTokenNeverLogged: refusals and pages log, but never the token.
func TestTokenNeverLogged(t *testing.T) {
	e := newEnv(t)
	p := e.path(SessionScope("proj"))
	tok := strings.Split(p, "/")[2]
	e.get(t, p)
	e.get(t, p+"files/secrets/prod.key")
	e.get(t, "/s/"+tok[:len(tok)-2]+"xx/")
	e.clock.Add(48 * time.Hour)
	e.get(t, p)
	if e.logs.Len() == 0 {
		t.Fatal("nothing logged: the test would not see a token in the log")
	}
	if strings.Contains(e.logs.String(), tok[:20]) {
		t.Fatalf("the log holds the token: %s", e.logs.String())
	}
}

// TestNewNeedsAPolicy: no default-allow: a handler without a policy check
// is an error, not a view that shows every file.
func TestNewNeedsAPolicy(t *testing.T) {
	e := newEnv(t)
	opt := e.h.opt
	opt.ReadDenied = nil
	if _, err := New(opt); err == nil {
		t.Fatal("New without ReadDenied succeeded")
	}
}

// A handler that only makes links (ccbridge mcp's) reads the revocation
// another process (the daemon) made: its next link holds.
func TestLinksAfterAnotherProcessRevoked(t *testing.T) {
	e := newEnv(t)
	maker, err := New(e.h.opt) // another process on the same state
	if err != nil {
		t.Fatal(err)
	}
	maker.Link(SessionScope("proj"), 0) // made before: its generation read
	if err := e.h.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	link := maker.Link(SessionScope("proj"), 0)
	path := link[strings.Index(link, "/s/"):]
	if w := e.get(t, path); w.Code != http.StatusOK {
		t.Fatalf("a link made after another process revoked = %d, want 200", w.Code)
	}
}
