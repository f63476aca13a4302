// Package web is the read-only web view: one session's conversation (live),
// its diff and its files, and a server's index of sessions, served to
// whoever holds a capability link ccbridge posted. It is one more front end
// over the core (docs: front-ends.md): it reads what the core knows through
// the small interfaces of Options and changes nothing. It must not import
// router, gateway, discord, telegram or daemon (deps test).
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Session is what the pages show of one session.
type Session struct {
	Key        string // the session's state key: a session link's scope
	Server     string // the server whose index lists it
	Name       string // project or thread name, as the panel shows it
	Dir        string // the folder Claude works in (the Files page's root)
	Transcript string // Claude's transcript (JSONL); "" before Claude started
	Branch     string
	Status     string
	Updated    time.Time
	// Figures are what a reply's footer shows (model, context, cost); ""
	// when not known yet.
	Figures string
	// Cards are the prompts the session asked in the chat (permission,
	// question, plan) that the state still holds, oldest first.
	Cards []Card
}

// Card is one prompt card and what became of it.
type Card struct {
	Tool    string
	Input   string // the tool's input as JSON
	Status  string // a state.Request status
	Outcome string // what the card says was decided (chat Markdown); "" until then
	At      time.Time
}

// Sessions is where the pages find sessions (the registry, in the daemon).
type Sessions interface {
	Session(key string) (Session, bool)
	List(server string) []Session
}

// Diff is what /diff shows for a session.
type Diff struct {
	Patch       string
	Head        string // the commit the working tree is at
	Uncommitted bool
	// Merge is the commit "Merge this" would land; "" when the button is
	// not offered (uncommitted changes, or no ccbridge worktree).
	Merge string
}

// DiffSource computes a session's diff as /diff does.
type DiffSource interface {
	Diff(ctx context.Context, s Session) (Diff, error)
}

// Options configure the handler. Sessions, StateDir and ReadDenied are
// required.
type Options struct {
	Sessions Sessions
	Diffs    DiffSource // nil: the Diff page says it is not available
	// StateDir is the durable state directory holding the signing key.
	StateDir string
	// Redact masks secrets in everything shown; nil means redact.String,
	// the masking every Discord post gets.
	Redact func(string) string
	// ReadDenied reports whether the session's [policy] denies reading
	// path (absolute; asked for the path as named and as resolved).
	ReadDenied func(s Session, path string) bool
	// Private are files and folders never served, whatever the session's
	// folder holds: the runtime dir, the config, the token file, the
	// durable state dir.
	Private []string
	// MaxFileBytes caps a file shown on the Files page (default 1 MiB).
	MaxFileBytes int64
	LinkTTL      time.Duration // default 24 h
	Listen       string        // host:port, the link base without PublicURL
	PublicURL    string        // the link base when a proxy or tunnel sits in front
	TLSCert      string
	TLSKey       string
	Now          func() time.Time
	Logger       *slog.Logger
}

// DefaultLinkTTL is how long a link is valid unless configured.
const DefaultLinkTTL = 24 * time.Hour

const defaultMaxFile = 1 << 20

// maxStreams bounds the live streams open at once: each holds a watcher
// and a goroutine, and a link may be opened in many tabs.
const maxStreams = 32

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/*
var assetFS embed.FS

// pagesParsed says whether the templates are parsed yet (for the test that
// keeps their parsing out of start-up).
var pagesParsed atomic.Bool

// pages are the view's templates, parsed by the first page served: parsed
// at init, html/template's parser and escaper ran in every daemon, view on
// or off, and stayed paged in (BenchmarkDaemonIdleRSSWebView).
var pages = sync.OnceValue(func() *template.Template {
	t := template.Must(template.New("").Funcs(template.FuncMap{
		"add": func(a, b int) int { return a + b },
		"inc": func(i int) int { return i + 1 },
	}).ParseFS(templateFS, "templates/*.html"))
	pagesParsed.Store(true)
	return t
})

// Handler serves the web view. It is an http.Handler.
type Handler struct {
	opt     Options
	links   *state.WebLinkStore
	key     []byte
	gen     atomic.Uint64
	ttl     atomic.Int64           // how long a new link lives: opt.LinkTTL, then SetLinkTTL's
	base    atomic.Pointer[string] // the bound address, set by Server.Start
	private []string
	streams chan struct{}
	recheck time.Duration // recheckEvery; shorter in tests
	log     *slog.Logger
	mu      sync.Mutex // serializes Revoke
}

// New opens (creating once) the signing key in opt.StateDir and returns
// the handler.
func New(opt Options) (*Handler, error) {
	if opt.Sessions == nil {
		return nil, errors.New("web view: no sessions")
	}
	if opt.ReadDenied == nil {
		// No default-allow: the daemon passes PolicyReadDenied.
		return nil, errors.New("web view: no policy check")
	}
	d, err := state.Open(opt.StateDir)
	if err != nil {
		return nil, fmt.Errorf("open web links: %w", err)
	}
	links, err := state.OpenWebLinks(d)
	if err != nil {
		return nil, fmt.Errorf("open web links: %w", err)
	}
	wl, err := links.Load(context.Background())
	if err != nil {
		return nil, fmt.Errorf("open web links: %w", err)
	}
	if opt.Redact == nil {
		opt.Redact = redact.String
	}
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = defaultMaxFile
	}
	if opt.LinkTTL <= 0 {
		opt.LinkTTL = DefaultLinkTTL
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	h := &Handler{opt: opt, links: links, key: wl.Key, streams: make(chan struct{}, maxStreams), recheck: recheckEvery, log: opt.Logger}
	h.gen.Store(wl.Generation)
	h.ttl.Store(int64(opt.LinkTTL))
	// The state dir holds the key itself: never served, whatever else is.
	h.private = resolvedAll(append([]string{opt.StateDir}, opt.Private...))
	return h, nil
}

// Revoke makes every link made so far invalid (/web revoke), durably;
// live streams opened with one end within a tick.
func (h *Handler) Revoke(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	wl, err := h.links.Revoke(ctx)
	if err != nil {
		return fmt.Errorf("revoke web links: %w", err)
	}
	h.gen.Store(wl.Generation)
	return nil
}

// SetLinkTTL sets how long the links made from now on live (a reloaded
// link_ttl; 0: the default). Links made before keep their expiry.
func (h *Handler) SetLinkTTL(ttl time.Duration) {
	if ttl <= 0 {
		ttl = DefaultLinkTTL
	}
	h.ttl.Store(int64(ttl))
}

func (h *Handler) linkTTL() time.Duration { return time.Duration(h.ttl.Load()) }

// Link returns a link to scope valid for ttl (the configured link_ttl
// when ttl is 0): on PublicURL when set, else on the listen address.
func (h *Handler) Link(scope Scope, ttl time.Duration) string {
	if ttl <= 0 {
		ttl = h.linkTTL()
	}
	return h.baseURL() + h.pathFor(scope, h.opt.Now().Add(ttl))
}

func (h *Handler) pathFor(scope Scope, expires time.Time) string {
	// Read again: a revoke by another process (the daemon, when ccbridge
	// mcp makes the link) must not leave this one minting dead links.
	if wl, err := h.links.Load(context.Background()); err == nil {
		h.gen.Store(wl.Generation)
	}
	tok := sign(h.key, claims{scope: scope, expires: expires, generation: h.gen.Load()})
	return "/" + string(scope.Kind) + "/" + tok + "/"
}

func (h *Handler) baseURL() string {
	if h.opt.PublicURL != "" {
		return strings.TrimRight(h.opt.PublicURL, "/")
	}
	addr := h.opt.Listen
	if b := h.base.Load(); b != nil {
		addr = *b
	}
	scheme := "http://"
	if h.opt.TLSCert != "" && h.opt.TLSKey != "" {
		scheme = "https://"
	}
	return scheme + addr
}

// csp allows the page's own stylesheet and script and nothing else: no
// inline script or style, no framing, no form, no other origin.
const csp = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func setHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// refuse answers 403 and says nothing of why: a prober learns neither
// whether a token was close, expired or revoked, nor what exists.
func refuse(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte("forbidden\n"))
}

// ServeHTTP routes /s/<token>/… (a session's pages) and /i/<token>/ (a
// server's index). Anything else, and any token that does not hold for
// the route, is refused the same way.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setHeaders(w)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if len(p) < 4 || p[0] != '/' || p[2] != '/' {
		refuse(w)
		return
	}
	kind := Kind(p[1])
	tok, rest, slash := strings.Cut(p[3:], "/")
	c, ok := h.valid(tok, kind)
	if !ok {
		h.log.Debug("web: link refused", "route", string(kind)) // never the token
		refuse(w)
		return
	}
	if !slash {
		// Relative links need the trailing slash.
		redirect(w, "./"+tok+"/")
		return
	}
	pg := page{Base: relBase(rest), Expires: c.expires.UTC().Format("2006-01-02 15:04 MST"), claims: c}
	if name, ok := strings.CutPrefix(rest, "assets/"); ok {
		serveAsset(w, name)
		return
	}
	if kind == KindIndex {
		if rest != "" {
			http.NotFound(w, r)
			return
		}
		h.serveIndex(w, pg)
		return
	}
	s, ok := h.opt.Sessions.Session(c.scope.ID)
	if !ok {
		http.NotFound(w, r)
		return
	}
	pg.Title, pg.Nav = s.Name, true
	switch {
	case rest == "":
		h.serveSession(w, r, s, pg)
	case rest == "events":
		h.serveEvents(w, r, s, tok)
	case rest == "diff":
		h.serveDiff(w, r, s, pg)
	case rest == "files" || strings.HasPrefix(rest, "files/"):
		h.serveFiles(w, r, s, pg, strings.TrimPrefix(strings.TrimPrefix(rest, "files"), "/"))
	default:
		http.NotFound(w, r)
	}
}

// valid checks a token for a route: signature, scope kind, expiry,
// generation. It gives no reason: the caller refuses all alike.
func (h *Handler) valid(tok string, kind Kind) (claims, bool) {
	c, err := parse(h.key, tok)
	if err != nil || c.scope.Kind != kind || !h.opt.Now().Before(c.expires) || c.generation != h.gen.Load() {
		return claims{}, false
	}
	return c, true
}

// relBase is the relative path from the page at rest back to the token's
// root, so links hold behind a proxy that adds a path prefix.
func relBase(rest string) string {
	if n := strings.Count(rest, "/"); n > 0 {
		return strings.Repeat("../", n)
	}
	return "./"
}

// redirect answers 302 to a relative location: http.Redirect would make
// it absolute, and wrong behind a proxy that strips a path prefix.
func redirect(w http.ResponseWriter, rel string) {
	w.Header().Set("Location", rel)
	w.WriteHeader(http.StatusFound)
}

// page is what every template gets.
type page struct {
	Title, Page, Base, Expires string
	Nav                        bool
	claims                     claims
}

func (h *Handler) render(w http.ResponseWriter, name string, data any) {
	var b strings.Builder
	if err := pages().ExecuteTemplate(&b, name, data); err != nil {
		h.log.Error("web: render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

var assetTypes = map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}

func serveAsset(w http.ResponseWriter, name string) {
	data, err := assetFS.ReadFile("assets/" + name)
	if err != nil || strings.Contains(name, "/") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", assetTypes[path.Ext(name)])
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

type indexEntry struct {
	Name, Link, Status, Branch, Updated string
}

func (h *Handler) serveIndex(w http.ResponseWriter, pg page) {
	server := pg.claims.scope.ID
	pg.Title, pg.Page = server, "index"
	var list []indexEntry
	for _, s := range h.opt.Sessions.List(server) {
		if s.Server != server {
			continue
		}
		// A session link made here lives no longer than the index link.
		e := indexEntry{Name: h.opt.Redact(s.Name), Link: "../.." + h.pathFor(SessionScope(s.Key), pg.claims.expires), Status: s.Status, Branch: s.Branch}
		if !s.Updated.IsZero() {
			e.Updated = s.Updated.UTC().Format("2006-01-02 15:04")
		}
		list = append(list, e)
	}
	h.render(w, "index", struct {
		page
		Sessions []indexEntry
	}{pg, list})
}
