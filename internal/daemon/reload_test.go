package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

const reloadTOML = `
[general]
machine = "box"
[claude]
env = { MARK = %q }
[[servers]]
name = "home"
token_env = "CCBRIDGE_RELOAD_TOKEN"
guild_id = "100000000000000001"
owner_ids = ["100000000000000002"]
general_channel_id = "100000000000000099"
  [[servers.projects]]
  name = "api"
  channel_id = "100000000000000003"
  path = %q
`

const webProject = `
  [[servers.projects]]
  name = "web"
  channel_id = "100000000000000004"
  path = %q
`

// reloadRig runs a reloader on a config file of its own and records what
// it applies and says.
type reloadRig struct {
	path, dir string
	mu        sync.Mutex
	applied   []*config.Config
	said      []string
}

func newReloadRig(t *testing.T) *reloadRig {
	t.Helper()
	hup := catchHUP()
	t.Cleanup(func() { signal.Stop(hup) })
	return newReloadRigHUP(t, hup)
}

// newReloadRigHUP is newReloadRig whose reloader reloads on hup.
func newReloadRigHUP(t *testing.T, hup chan os.Signal) *reloadRig {
	t.Helper()
	t.Setenv("CCBRIDGE_RELOAD_TOKEN", "tok-0123456789")
	g := &reloadRig{dir: t.TempDir()}
	g.path = filepath.Join(t.TempDir(), "config.toml")
	g.write(t, fmt.Sprintf(reloadTOML, "one", g.dir))
	cfg, problems, err := config.LoadAll(g.path)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	apply := func(_ context.Context, c *config.Config) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.applied = append(g.applied, c)
		return nil
	}
	post := func(_ context.Context, server, ch, text string) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.said = append(g.said, server+" "+ch+" "+text)
		return nil
	}
	r := newReloader(cfg, hup, slog.New(slog.DiscardHandler), apply, post)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return g
}

// write replaces the file as editors do: a new file renamed over it.
func (g *reloadRig) write(t *testing.T, text string) {
	t.Helper()
	tmp := g.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, g.path); err != nil {
		t.Fatal(err)
	}
}

// waitSaid waits for the n-th thing said and returns it.
func (g *reloadRig) waitSaid(t *testing.T, n int) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		g.mu.Lock()
		if len(g.said) >= n {
			s := g.said[n-1]
			g.mu.Unlock()
			return s
		}
		g.mu.Unlock()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t.Fatalf("said %d things, want %d: %q", len(g.said), n, g.said)
	return ""
}

func (g *reloadRig) appliedCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.applied)
}

// An edit is applied and said in the panel channel; a broken one changes
// nothing and says every problem; fixing it applies again; SIGHUP reads the
// file again.
func TestReloadAppliesGoodEditsAndRefusesBrokenOnes(t *testing.T) {
	g := newReloadRig(t)
	g.write(t, fmt.Sprintf(reloadTOML+webProject, "two", g.dir, g.dir))
	said := g.waitSaid(t, 1)
	if !strings.HasPrefix(said, "home 100000000000000099 ⚙️ box: config reloaded.") ||
		!strings.Contains(said, "project home/web added") || !strings.Contains(said, "[claude] env (changed MARK)") || strings.Contains(said, "two") {
		t.Fatalf("said %q", said)
	}
	g.mu.Lock()
	if len(g.applied) != 1 || len(g.applied[0].Servers[0].Projects) != 2 || g.applied[0].Claude.Env["MARK"] != "two" {
		t.Fatalf("applied %+v", g.applied)
	}
	g.mu.Unlock()

	broken := strings.Replace(fmt.Sprintf(reloadTOML+webProject, "two", g.dir, g.dir), "[claude]\n", "[claude]\npermision_mode = \"plan\"\n", 1)
	g.write(t, broken+"[[servers]]\nname = \"bad name\"\n")
	said = g.waitSaid(t, 2)
	for _, want := range []string{"⚠️ box: the edited config", "was not applied; ccbridge keeps running with the config it had", "permision_mode", "bad name"} {
		if !strings.Contains(said, want) {
			t.Errorf("broken edit: said %q, want %q in it", said, want)
		}
	}
	if n := g.appliedCount(); n != 1 {
		t.Fatalf("a broken edit was applied (%d applies)", n)
	}

	// Put back as it runs: nothing to apply, but the fix is said.
	g.write(t, fmt.Sprintf(reloadTOML+webProject, "two", g.dir, g.dir))
	if said = g.waitSaid(t, 3); !strings.Contains(said, "✅ box: the config is fixed") {
		t.Fatalf("said %q", said)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); g.appliedCount() < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
	if n := g.appliedCount(); n != 3 {
		t.Fatalf("SIGHUP did not read the config again (%d applies)", n)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.said) != 3 || slices.ContainsFunc(g.said, func(s string) bool { return strings.Contains(s, "100000000000000003") }) {
		t.Fatalf("said %q", g.said)
	}
}

// apply reaches every part that reads the config: the hooks' records
// (projects, owners, policies, prompt timeout) and the router, sessions,
// panel and attention loop in this process.
func TestApplyReachesEveryPart(t *testing.T) {
	t.Setenv("CCBRIDGE_RELOAD_TOKEN", "tok-0123456789")
	dir := t.TempDir()
	cfg, err := config.Parse(fmt.Sprintf(reloadTOML, "one", dir))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := state.OpenExtras(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := store.Bots.Update(ctx, "home", func(b *state.Bot) error { b.Instance, b.PromptTimeout = "inst", time.Minute; return nil }); err != nil {
		t.Fatal(err)
	}
	sessions, err := session.New(session.Options{Config: cfg, Store: store, HookStop: "/bin/hs", HookPretool: "/bin/hp"})
	if err != nil {
		t.Fatal(err)
	}
	rt := router.New(ctx, router.Options{Config: cfg, Store: store})
	defer rt.Wait()
	pnl := &panel.Panel{Config: cfg, Store: store}
	att := &attention{cfg: cfg}
	parts := &liveParts{store: store, ext: ext, durable: t.TempDir(), sessions: sessions, router: rt, panel: pnl, attention: att, log: slog.New(slog.DiscardHandler)}

	next, err := config.Parse(fmt.Sprintf(reloadTOML+webProject, "two", dir, dir) + "[[servers]]\nname = \"work\"\n")
	if err != nil {
		t.Fatal(err)
	}
	next.Claude.PromptTimeout = config.Duration{Duration: 7 * time.Minute}
	next.Servers[0].OwnerIDs = []string{"100000000000000055"}
	if err := parts.apply(ctx, next); err != nil {
		t.Fatal(err)
	}

	routes, err := store.Routes.Get(state.RoutesKey)
	if err != nil || !slices.ContainsFunc(routes.Routes, func(r state.Route) bool { return r.Project == "web" }) {
		t.Errorf("routes = %+v, %v", routes, err)
	}
	prefs, err := ext.Prefs.Get(state.PrefsKey("home", "web"))
	if err != nil || !slices.Equal(prefs.Owners, []string{"100000000000000055"}) {
		t.Errorf("prefs of web = %+v, %v", prefs, err)
	}
	if prefs, _ := ext.Prefs.Get(state.PrefsKey("home", "api")); !slices.Equal(prefs.Owners, []string{"100000000000000055"}) {
		t.Errorf("the removed owner is still among api's: %+v", prefs.Owners)
	}
	if b, _ := store.Bots.Get("home"); b.PromptTimeout != 7*time.Minute || b.Instance != "inst" {
		t.Errorf("bot record = %+v", b)
	}
	if _, err := store.Bots.Get("work"); err == nil {
		t.Error("a bot record was made for a server whose bot is not connected")
	}
	if pnl.Current() != next || att.conf() != next {
		t.Error("the panel or the attention loop still reads the old config")
	}
}

// A SIGHUP that arrives while the daemon starts (systemctl reload right
// after a restart) neither kills it (the default action, which systemd
// takes for a clean stop) nor is lost: the reloader reloads once it runs.
func TestSIGHUPBeforeTheReloaderRunsReloadsOnce(t *testing.T) {
	hup := catchHUP()
	t.Cleanup(func() { signal.Stop(hup) })
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(hup) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the SIGHUP was not caught")
		}
	}
	g := newReloadRigHUP(t, hup)
	for deadline := time.Now().Add(10 * time.Second); g.appliedCount() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the early SIGHUP did not reload the config")
		}
	}
}

// An edit whose records cannot all be written changes nothing: the
// policies are written first (a failure there leaves the routes as they
// were), redaction is switched only once every write succeeded, and a
// later failure writes the previous config's records back.
func TestAFailedApplyKeepsTheRecordsItHad(t *testing.T) {
	t.Setenv("CCBRIDGE_RELOAD_TOKEN", "tok-0123456789")
	t.Cleanup(func() { redact.SetEnabled(true) })
	dir := t.TempDir()
	cfg, err := config.Parse(fmt.Sprintf(reloadTOML, "one", dir))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := state.OpenExtras(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	durable := t.TempDir()
	if err := writeRoutes(ctx, store, cfg); err != nil {
		t.Fatal(err)
	}
	if err := writePrefs(ctx, ext, cfg); err != nil {
		t.Fatal(err)
	}
	if err := writePolicies(ctx, store, cfg, durable); err != nil {
		t.Fatal(err)
	}
	sessions, err := session.New(session.Options{Config: cfg, Store: store, HookStop: "/bin/hs", HookPretool: "/bin/hp"})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rt := router.New(rctx, router.Options{Config: cfg, Store: store})
	defer rt.Wait()
	parts := &liveParts{store: store, ext: ext, durable: durable, cur: cfg, sessions: sessions, router: rt,
		panel: &panel.Panel{Config: cfg, Store: store}, attention: &attention{cfg: cfg}, log: slog.New(slog.DiscardHandler)}
	next, err := config.Parse(fmt.Sprintf(reloadTOML+webProject, "two", dir, dir) + "[policy]\nredact = false\ndeny = [\"Bash(curl *)\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	hasWeb := func() bool {
		routes, err := store.Routes.Get(state.RoutesKey)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(routes.Routes, func(r state.Route) bool { return r.Project == "web" })
	}
	// break makes a collection's directory a file: even root cannot write
	// into it. The returned func puts the directory back.
	breakDir := func(name string) func() {
		p := filepath.Join(store.Dir.Root(), name)
		if err := os.Rename(p, p+".away"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".away", p); err != nil {
				t.Fatal(err)
			}
		}
	}

	fix := breakDir("policies")
	if err := parts.apply(ctx, next); err == nil {
		t.Fatal("applied with the policies unwritable")
	}
	fix()
	if hasWeb() {
		t.Error("a failed policies write left the new routes in place")
	}
	if !redact.Enabled() {
		t.Error("a failed apply turned redaction off")
	}

	fix = breakDir("prefs")
	if err := parts.apply(ctx, next); err == nil {
		t.Fatal("applied with the prefs unwritable")
	}
	fix()
	if hasWeb() {
		t.Error("a failed prefs write left the new routes in place")
	}
	pol, err := state.ReadPolicies(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if pol.RedactOff || len(pol.Scopes[state.PolicyScope("home", "api", "")].Deny) != 0 {
		t.Errorf("a failed apply left the new policies: %+v", pol)
	}
	if !redact.Enabled() {
		t.Error("a failed apply turned redaction off")
	}

	if err := parts.apply(ctx, next); err != nil {
		t.Fatal(err)
	}
	if !hasWeb() || redact.Enabled() {
		t.Errorf("a good apply: web routed %v, redaction on %v", hasWeb(), redact.Enabled())
	}
}

// A reload's warnings (redaction turned off) are said with the reload
// notice in Discord, not only in the log.
func TestReloadNoticeCarriesTheWarnings(t *testing.T) {
	g := newReloadRig(t)
	t.Cleanup(func() { redact.SetEnabled(true) })
	g.write(t, fmt.Sprintf(reloadTOML, "one", g.dir)+"[policy]\nredact = false\n")
	said := g.waitSaid(t, 1)
	if !strings.Contains(said, "config reloaded") || !strings.Contains(said, "\nWarnings:\n- ") || !strings.Contains(said, "redaction is off") {
		t.Fatalf("said %q", said)
	}
}
