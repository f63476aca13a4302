//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
	"github.com/ccbridge/ccbridge/internal/web"
)

// phone is the viewport every page is checked and photographed at.
const phoneW, phoneH = 390, 844

// browser is the headless Chromium this test process shares: started once,
// on first use; each scenario opens its own tab (newTab). stopBrowser, from
// TestMain, ends it.
var browser struct {
	once   sync.Once
	ctx    context.Context // the first tab's: new tabs are made from it
	cancel func()
	err    error
}

// browserFlags are what headless Chromium needs on these machines: root
// (no sandbox), no GPU, and none of its own network traffic, which a
// closed network refuses (machine notes: go.md).
func browserFlags(path string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-sync", true), chromedp.NoFirstRun)
}

func startBrowser(path string) {
	// ExecAllocator makes a new, empty user data dir and removes it when
	// the allocator's context ends.
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), browserFlags(path)...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	browser.ctx, browser.cancel = ctx, func() { cancelCtx(); cancelAlloc() }
	// The first action starts the browser, which lives as long as the
	// context it ran with: so the shared one, not one with a timeout.
	browser.err = chromedp.Do(ctx, chromedp.Navigate("about:blank"))
}

// stopBrowser ends the shared browser, if a test started it.
func stopBrowser() {
	if browser.cancel != nil {
		browser.cancel()
	}
}

// chromium is Debian's Chromium (make tools installs it), or a skip — a
// failure under CCBRIDGE_TEST_DISALLOW_SKIP=1.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.SkipUnlessAllowed(t, "chromium is not installed: the browser tests need Debian's chromium package (make tools installs it)")
	return ""
}

// tab is one browser tab at phone size, and where its screenshots go.
type tab struct {
	t     testing.TB
	ctx   context.Context
	shots string
}

func newTab(t testing.TB) *tab {
	t.Helper()
	path := chromium(t)
	browser.once.Do(func() { startBrowser(path) })
	if browser.err != nil {
		t.Fatalf("start chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	t.Cleanup(cancel) // closes the tab, not the browser
	// The first action opens the tab, which lives as long as the context it
	// ran with: so the tab's own, not one with a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(phoneW, phoneH, chromedp.EmulatePortrait)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return &tab{t: t, ctx: ctx, shots: artifactsDir(t)}
}

// artifactsDir is where a test's screenshots are kept after it:
// $CCBRIDGE_TEST_ARTIFACTS, else e2e/artifacts (git-ignored).
func artifactsDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv("CCBRIDGE_TEST_ARTIFACTS")
	if root == "" {
		root = "artifacts"
	}
	dir, err := filepath.Abs(filepath.Join(root, t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// open loads url and returns the HTTP status of the page.
func (tb *tab) open(url string) int64 {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, long)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		tb.t.Fatalf("open %s: %v", redactLink(url), err)
	}
	return resp.Status
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, long)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitText waits, on every change of the page (no sleep), until an
// element sel holds want in its text.
func (tb *tab) waitText(what, sel, want string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, long)
	defer cancel()
	expr := fmt.Sprintf(`[...document.querySelectorAll(%s)].some(e => e.textContent.includes(%s))`, js(sel), js(want))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingMutation())); err != nil {
		body := eval[string](tb, `document.body ? document.body.innerText : ""`)
		tb.t.Fatalf("%s: %q never showed in %s: %v\npage text:\n%s", what, want, sel, err, body)
	}
}

// text is the text of the first element sel ("" when there is none).
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.textContent : ""; })()`, js(sel)))
}

// fitsThePhone fails the test when the page scrolls sideways at 390 px.
func (tb *tab) fitsThePhone(page string) {
	tb.t.Helper()
	if w := eval[int](tb, `document.scrollingElement.scrollWidth`); w > phoneW {
		tb.t.Errorf("the %s page is %d px wide at %d px: it scrolls sideways", page, w, phoneW)
	}
}

// scheme emulates the system's colour scheme (light or dark).
func (tb *tab) scheme(s string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, long)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia,
		emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: s}}}); err != nil {
		tb.t.Fatalf("emulate a %s scheme: %v", s, err)
	}
}

// shot saves a screenshot of the viewport.
func (tb *tab) shot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, long)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(tb.shots, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// redactLink keeps a link's token out of a failure message.
func redactLink(u string) string {
	if i := strings.Index(u, "/s/"); i >= 0 {
		return u[:i+3] + "…"
	}
	return u
}

// The web view in a real browser (headless Chromium at phone size), served
// by the daemon with the real Claude Code CLI and the fake Discord: the
// link the bot's /web answer carries opens the conversation — the tool
// call folded with its input and result, the card with what was decided,
// the footer's figures — and a reply sent later appears in the open page
// without a reload; the diff page shows the changed lines; a path out of
// the folder (by name or by a symlink), a path [policy] denies reading, a
// tampered and an expired link all get the 403 page. No page scrolls
// sideways at 390 px; each is photographed at 390×844.
func TestWebViewInABrowser(t *testing.T) {
	t.Parallel()
	tb := newTab(t)
	b := newBridge(t, 1, 1, fmt.Sprintf("[web]\nlisten = \"127.0.0.1:%d\"\n[policy]\ndeny = [\"Read(secrets/**)\"]\n", freePort(t)))
	p := b.projects[0]
	if err := os.MkdirAll(filepath.Join(p.dir, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"notes.txt": "first line\n", "secrets/key.txt": "SECRET-IN-THE-FOLDER\n"} {
		if err := os.WriteFile(filepath.Join(p.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRepo(t, p.dir)
	if err := os.Symlink(b.cfg, filepath.Join(p.dir, "config-link")); err != nil {
		t.Fatal(err)
	}

	// A turn with a card: the page shows the call and the owner's decision.
	b.model.Script("SCN_WEBCARD", fakemodel.Tool("", "Bash", map[string]any{"command": "touch web-card.txt", "description": "Touch a file"}))
	b.say(p, "SCN_WEBCARD")
	card := b.waitCard(p, "the touch card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch web-card.txt") })
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitCardText(card, "Allowed** by")
	b.waitReply(p, "Done. Last tool result:")

	link := linkOf(b.command(p, "web", nil, "in the browser"))
	if !strings.HasPrefix(link, "http://127.0.0.1:") {
		t.Fatalf("no session link in the /web answer")
	}
	if code := tb.open(link); code != 200 {
		t.Fatalf("the session page answered %d", code)
	}
	tb.waitText("the conversation", "#log", "Done. Last tool result:")
	tb.waitText("the turn's prompt", "#log .prompt", "SCN_WEBCARD")
	if got := tb.text("details.tool summary"); got != "Bash Touch a file" {
		t.Errorf("the tool call's summary is %q", got)
	}
	if got := tb.text("details.tool pre.input"); got != "touch web-card.txt" {
		t.Errorf("the tool call's input is %q", got)
	}
	if eval[bool](tb, `document.querySelector("details.tool").open`) {
		t.Error("the tool call is not folded")
	}
	if !strings.Contains(tb.text(".cards"), "Allowed by an owner") || !strings.Contains(tb.text(".cards"), "touch web-card.txt") {
		t.Errorf("the card and its decision are not shown: %q", tb.text(".cards"))
	}
	// The statusLine writes the figures a moment after the turn: the page
	// shows them once they are known (it is loaded again until then).
	for deadline := time.Now().Add(long); !strings.Contains(tb.text(".figures"), "ctx "); {
		if time.Now().After(deadline) {
			t.Fatalf("the footer's figures never showed: %q", tb.text(".figures"))
		}
		time.Sleep(200 * time.Millisecond)
		tb.open(link)
	}
	tb.fitsThePhone("session")
	tb.shot("session")

	// Live: the next reply appears in the page as it is: no reload.
	eval[bool](tb, `(window.ccbridgeKept = true)`)
	b.say(p, "live in the browser")
	tb.waitText("the live reply", "#log", "ok: live in the browser")
	if !eval[bool](tb, `window.ccbridgeKept === true`) {
		t.Error("the page was reloaded to show the reply: it did not arrive live")
	}
	tb.fitsThePhone("session")
	tb.shot("session-live")

	// Dark mode follows the system's.
	light := eval[string](tb, `getComputedStyle(document.body).backgroundColor`)
	tb.scheme("dark")
	if dark := eval[string](tb, `getComputedStyle(document.body).backgroundColor`); dark == light || dark != "rgb(13, 17, 23)" {
		t.Errorf("the page's background in dark mode is %s (light: %s)", dark, light)
	}
	tb.shot("session-dark")
	tb.scheme("light")

	if err := os.WriteFile(filepath.Join(p.dir, "notes.txt"), []byte("first line\nadded from the session\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := tb.open(link + "diff"); code != 200 {
		t.Fatalf("the diff page answered %d", code)
	}
	tb.waitText("the diff", "table.diff tr.add", "added from the session")
	tb.waitText("the diff's files", "details.file summary", "notes.txt")
	tb.fitsThePhone("diff")
	tb.shot("diff")
	if code := tb.open(link + "diff?view=split"); code != 200 {
		t.Fatalf("the side-by-side diff answered %d", code)
	}
	tb.waitText("the side-by-side diff", "table.split td.code.add", "added from the session")
	tb.fitsThePhone("side-by-side diff")
	tb.shot("diff-split")

	if code := tb.open(link + "files/notes.txt"); code != 200 {
		t.Fatalf("the file page answered %d", code)
	}
	tb.waitText("the file", "table.source", "added from the session")
	tb.fitsThePhone("files")
	tb.shot("file")

	expired := expiredLink(t, b, p)
	i := strings.Index(link, "/s/") + 5
	flip := "A"
	if link[i] == 'A' {
		flip = "B"
	}
	for what, url := range map[string]string{
		"a path out of the folder":      link + "files/..%2f..%2fconfig.toml",
		"a symlink out of the folder":   link + "files/config-link",
		"a path [policy] denies":        link + "files/secrets/key.txt",
		"a tampered link":               link[:i] + flip + link[i+1:],
		"a tampered link's diff":        link[:i] + flip + link[i+1:] + "diff",
		"an expired link":               expired,
		"an expired link's files":       expired + "files/notes.txt",
		"the live stream of an expired": expired + "events?from=0",
	} {
		if code := tb.open(url); code != 403 {
			t.Errorf("%s: %d, want 403", what, code)
		}
		if body := tb.text("body"); strings.TrimSpace(body) != "forbidden" {
			t.Errorf("%s: the refusal says %q", what, body)
		}
	}
	tb.fitsThePhone("refusal")
	tb.shot("refused")
}

// expiredLink is a link to p's session that expired a day ago, signed with
// the daemon's own key (read from its state dir, as ccbridge mcp does).
func expiredLink(t *testing.T, b *bridge, p *project) string {
	t.Helper()
	h, err := web.New(web.Options{Sessions: noSessions{}, ReadDenied: func(web.Session, string) bool { return true },
		StateDir: filepath.Join(b.stateDir, "ccbridge"), Listen: "unused",
		Now: func() time.Time { return time.Now().Add(-48 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	l := h.Link(web.SessionScope(p.key), 24*time.Hour)
	live := linkOf(b.command(p, "web", nil, "in the browser"))
	return live[:strings.Index(live, "/s/")] + l[strings.Index(l, "/s/"):]
}

type noSessions struct{}

func (noSessions) Session(string) (web.Session, bool) { return web.Session{}, false }
func (noSessions) List(string) []web.Session          { return nil }
