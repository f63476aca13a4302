package web

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

var wantHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"Referrer-Policy":         "no-referrer",
	"X-Frame-Options":         "DENY",
	"X-Content-Type-Options":  "nosniff",
	"Cache-Control":           "no-store",
}

// TestHeadersOnEveryRoute: every answer — pages, assets, the stream,
// refusals, not-found and wrong methods — carries the strict headers.
func TestHeadersOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	s := e.path(SessionScope("proj"))
	routes := map[string]int{
		s: 200, s + "diff": 200, s + "files/": 200, s + "files/src/main.go": 200, s + "assets/app.css": 200,
		s + "assets/live.js": 200, s + "assets/chroma.css": 200, s + "assets/nope.css": 404, s + "nope": 404,
		e.path(IndexScope("home")): 200, "/": 403, "/s/bad/": 403, s + "files/../x": 403, s + "files/bot.token": 403,
		strings.TrimSuffix(s, "/"): 302,
	}
	for target, code := range routes {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			w := httptest.NewRecorder()
			e.h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
			if w.Code != code {
				t.Errorf("%s %s = %d, want %d", method, target, w.Code, code)
			}
			for k, v := range wantHeaders {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s %s: %s = %q, want %q", method, target, k, got, v)
				}
			}
		}
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, httptest.NewRequest(method, s, nil))
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("%s = %d, want 405 with the headers", method, w.Code)
		}
	}
	// The stream too.
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	resp, err := srv.Client().Head(srv.URL + s + "events?from=0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, v := range wantHeaders {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("events: %s = %q, want %q", k, got, v)
		}
	}
}

var handlerAttr = regexp.MustCompile(`\son[a-z]+=`)

// TestNoInlineScriptOrStyle: the pages load script and style from files
// only, as the CSP demands.
func TestNoInlineScriptOrStyle(t *testing.T) {
	e := newEnv(t)
	write(t, e.transcript, replyLine("m", "hi"))
	s := e.path(SessionScope("proj"))
	for _, target := range []string{s, s + "diff", s + "files/", s + "files/src/main.go", e.path(IndexScope("home"))} {
		b := body(t, e.get(t, target))
		if strings.Contains(b, "<script>") || strings.Contains(b, "<style") || strings.Contains(b, " style=") || handlerAttr.MatchString(b) {
			t.Errorf("%s has inline script or style", target)
		}
	}
}

func TestServerAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	e := newEnv(t, func(o *Options) { o.Listen = ln.Addr().String() })
	srv := NewServer(e.h)
	err = srv.Start()
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("Start on a used address = %v, want EADDRINUSE", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after a failed Start = %v", err)
	}
}

func TestServerServesLinks(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Listen = "127.0.0.1:0" })
	srv := NewServer(e.h)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	link := e.h.Link(SessionScope("proj"), 0)
	if !strings.HasPrefix(link, "http://"+srv.Addr()+"/s/") {
		t.Fatalf("link %q does not name the bound address %s", link, srv.Addr())
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET link = %d", resp.StatusCode)
	}
}

// TestDeps: the web view is a front end over the core; it reaches no other
// front end and no daemon package (docs: front-ends.md).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/ccbridge/ccbridge/internal/"
	for _, d := range strings.Fields(string(out)) {
		for _, f := range []string{"router", "gateway", "discord", "telegram", "daemon", "mcp", "panel", "session", "tmux"} {
			if d == mod+f || strings.HasPrefix(d, mod+f+"/") || strings.Contains(d, "discordgo") {
				t.Errorf("internal/web depends on %s", d)
			}
		}
	}
}
