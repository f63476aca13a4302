package doctor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// trustProjects writes the ~/.claude.json of a HOME in which Claude
// trusted dirs (as its trust dialog's "Yes" does).
func trustProjects(t *testing.T, home string, dirs ...string) {
	t.Helper()
	projects := map[string]any{}
	for _, d := range dirs {
		projects[d] = map[string]any{"hasTrustDialogAccepted": true}
	}
	b, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "projects": projects})
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// authEnv is the environment `claude auth status` ran with.
func (w *world) authEnv() []string {
	for _, c := range w.fake.Commands() {
		if slices.Equal(c.Args, []string{"/opt/claude", "auth", "status", "--json"}) {
			return c.Env
		}
	}
	w.t.Fatal("claude auth status was not run")
	return nil
}

// doctor checks that Claude can log in for the HOME and environment the
// sessions get: a turn without it fails with "Not logged in · Please run
// /login", which the phone cannot do (first contact 2, finding 2).
func TestDoctorChecksClaudesLogin(t *testing.T) {
	w := newWorld(t)
	rs, out := w.run()
	if r := find(rs, "claude login"); r.Status != OK || !strings.Contains(r.Detail, "claude.ai") {
		t.Errorf("logged in: %+v\n%s", r, out)
	}
	if env := w.authEnv(); !slices.Contains(env, "HOME="+w.home) {
		t.Errorf("auth status ran without the sessions' HOME: %q", env)
	}

	w = newWorld(t)
	w.authOut, w.authErr = `{"loggedIn": false, "authMethod": "none", "apiProvider": "firstParty"}`, execx.Exit(1, "")
	rs, out = w.run()
	r := find(rs, "claude login")
	if r.Status != Warn || !strings.Contains(r.Detail, "no login") || !strings.Contains(r.Detail, w.home) {
		t.Errorf("not logged in: %+v\n%s", r, out)
	}
	for _, want := range []string{"run `claude` and log in with /login", "ANTHROPIC_API_KEY", "[claude].env"} {
		if !strings.Contains(r.Fix, want) || !strings.Contains(out, want) {
			t.Errorf("the fix lacks %q: %q\n%s", want, r.Fix, out)
		}
	}
	if !Passed(rs) {
		t.Errorf("a missing login failed doctor:\n%s", out)
	}
}

// The key the sessions get is the one in [claude].env, or the service's
// when a service is installed, not the shell's that runs doctor.
func TestDoctorChecksTheLoginWithTheSessionsEnvironment(t *testing.T) {
	w := newWorld(t)
	w.configText = "[claude]\nenv = { ANTHROPIC_API_KEY = \"sk-ant-from-config\" }\n" + w.configText
	w.env = []string{"CCBRIDGE_TOKEN_HOME=bot-token"}
	w.authOut = `{"loggedIn": true, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"}`
	rs, out := w.run()
	if r := find(rs, "claude login"); r.Status != OK || !strings.Contains(r.Detail, "ANTHROPIC_API_KEY") {
		t.Errorf("api key: %+v\n%s", r, out)
	}
	env := w.authEnv()
	if !slices.Contains(env, "ANTHROPIC_API_KEY=sk-ant-from-config") || slices.Contains(env, "CCBRIDGE_TOKEN_HOME=bot-token") {
		t.Errorf("env = %q", env)
	}

	w = newWorld(t)
	w.env = []string{"ANTHROPIC_API_KEY=sk-ant-from-the-shell"}
	w.run()
	if env := w.authEnv(); !slices.Contains(env, "ANTHROPIC_API_KEY=sk-ant-from-the-shell") {
		t.Errorf("without a service, the shell's key is the daemon's: %q", env)
	}

	w = newWorld(t)
	w.env = []string{"ANTHROPIC_API_KEY=sk-ant-from-the-shell"}
	w.serviceEnv = filepath.Join(w.dir, "service.env")
	_ = os.WriteFile(w.serviceEnv, []byte("# tokens\nCCBRIDGE_TOKEN_HOME=\"x\"\nANTHROPIC_API_KEY=\"sk-ant-\\\"svc\"\n"), 0o600)
	w.authOut, w.authErr = `{"loggedIn": false, "authMethod": "none"}`, execx.Exit(1, "")
	rs, out = w.run()
	env = w.authEnv()
	if !slices.Contains(env, `ANTHROPIC_API_KEY=sk-ant-"svc`) || slices.Contains(env, "ANTHROPIC_API_KEY=sk-ant-from-the-shell") {
		t.Errorf("with a service, its environment counts: %q", env)
	}
	if r := find(rs, "claude login"); r.Status != Warn || !strings.Contains(r.Detail, "the service's environment") || !strings.Contains(r.Fix, "service.env") {
		t.Errorf("service: %+v\n%s", r, out)
	}
}

// A Claude Code without `claude auth status`: the login is looked for in
// the files and variables Claude reads.
func TestDoctorFindsALoginWithoutAuthStatus(t *testing.T) {
	old := func(t *testing.T) *world {
		w := newWorld(t)
		w.authOut, w.authErr = "", execx.Exit(1, "error: unknown option '--json'")
		return w
	}
	w := old(t)
	if rs, out := w.run(); find(rs, "claude login").Status != Warn {
		t.Errorf("nothing: %+v\n%s", find(rs, "claude login"), out)
	}
	w = old(t)
	_ = os.MkdirAll(filepath.Join(w.home, ".claude"), 0o700)
	_ = os.WriteFile(filepath.Join(w.home, ".claude", ".credentials.json"), []byte(`{"claudeAiOauth":{"accessToken":"x"}}`), 0o600)
	if rs, out := w.run(); find(rs, "claude login").Status != OK {
		t.Errorf("credentials file: %+v\n%s", find(rs, "claude login"), out)
	}
	w = old(t)
	w.env = []string{"ANTHROPIC_AUTH_TOKEN=t"}
	if rs, out := w.run(); find(rs, "claude login").Status != OK {
		t.Errorf("ANTHROPIC_AUTH_TOKEN: %+v\n%s", find(rs, "claude login"), out)
	}
	w = old(t)
	_ = os.MkdirAll(filepath.Join(w.home, ".claude"), 0o700)
	_ = os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(`{"apiKeyHelper":"/bin/key"}`), 0o600)
	if rs, out := w.run(); find(rs, "claude login").Status != OK {
		t.Errorf("apiKeyHelper: %+v\n%s", find(rs, "claude login"), out)
	}
}

// Project folders Claude never trusted are listed (info): the first start
// there shows Claude's trust question. A trusted parent counts, as it does
// for Claude.
func TestDoctorListsProjectFoldersClaudeNeverTrusted(t *testing.T) {
	w := newWorld(t)
	rs, out := w.run()
	if r := find(rs, "claude trust"); r.Status != OK {
		t.Errorf("trusted: %+v\n%s", r, out)
	}
	w = newWorld(t)
	trustProjects(t, w.home, filepath.Join(w.dir, "elsewhere"))
	rs, out = w.run()
	r := find(rs, "claude trust")
	if r.Status != Info || !strings.Contains(r.Detail, "api ("+filepath.Join(w.dir, "api")+")") || !strings.Contains(r.Detail, "Yes, I trust this folder") {
		t.Errorf("untrusted: %+v\n%s", r, out)
	}
	w = newWorld(t)
	trustProjects(t, w.home, w.dir)
	if rs, out = w.run(); find(rs, "claude trust").Status != OK {
		t.Errorf("trusted parent: %+v\n%s", find(rs, "claude trust"), out)
	}
}
