package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDiffNothingChanged(t *testing.T) {
	a, b := parseValid(t), parseValid(t)
	b.Servers[0].Projects[0].Path = a.Servers[0].Projects[0].Path
	if d := Diff(a, b); len(d) != 0 {
		t.Fatalf("Diff of equal configs = %v", d)
	}
	if s := ReloadSummary(nil); s != "" {
		t.Fatalf("ReloadSummary(nil) = %q", s)
	}
}

// The changes a daemon applies at once and those that wait for a restart
// are told apart, and no secret is shown.
func TestDiffLiveAndRestart(t *testing.T) {
	old := parseValid(t)
	cur := parseValid(t)
	cur.Servers[0].Projects[0].Path = old.Servers[0].Projects[0].Path
	old.Claude.Env = map[string]string{"KEEP": "1", "GONE": "x", "ANTHROPIC_API_KEY": "sk-old-secret"}
	cur.Claude.Env = map[string]string{"KEEP": "1", "NEW": "y", "ANTHROPIC_API_KEY": "sk-new-secret"}
	cur.Claude.Args = []string{"--verbose"}
	cur.Tmux.Socket = "other"
	cur.Servers[0].Token, cur.Servers[0].TokenEnv = "inline-secret-token", ""
	cur.Servers[0].OwnerIDs = []string{"100000000000000009"}
	cur.Servers[0].Projects[0].Model = "opus"
	cur.Servers[0].Projects = append(cur.Servers[0].Projects, Project{Name: "web", ChannelID: "100000000000000004", Path: "/tmp"})
	cur.Servers = append(cur.Servers, Server{Name: "work"})
	cur.Policy.Deny = []string{"Bash(rm:*)"}

	got := map[string]bool{}
	for _, c := range Diff(old, cur) {
		got[c.What] = c.Restart
	}
	want := map[string]bool{
		"[tmux] socket": true,
		"[claude] args": false,
		"[claude] env (added NEW; changed ANTHROPIC_API_KEY; removed GONE)": false,
		"[policy] deny":                              false,
		"server home token":                          true,
		"server home token_env":                      true,
		"server home owner_ids (1 added, 1 removed)": false,
		"project home/api model":                     false,
		"project home/web added":                     false,
		"server work added":                          true,
	}
	for what, restart := range want {
		r, ok := got[what]
		if !ok {
			t.Errorf("missing change %q in %v", what, got)
		} else if r != restart {
			t.Errorf("%q: restart = %v, want %v", what, r, restart)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d changes, want %d: %v", len(got), len(want), got)
	}

	sum := ReloadSummary(Diff(old, cur))
	for _, secret := range []string{"sk-old-secret", "sk-new-secret", "inline-secret-token", "100000000000000009"} {
		if strings.Contains(sum, secret) {
			t.Errorf("summary shows %q:\n%s", secret, sum)
		}
	}
	for _, s := range []string{"Applied: ", "project home/web added", "Needs a restart of ccbridge to take effect: ", "[tmux] socket", "Running sessions keep"} {
		if !strings.Contains(sum, s) {
			t.Errorf("summary lacks %q:\n%s", s, sum)
		}
	}
}

// The note that running sessions keep their settings comes only with a
// change that reaches sessions.
func TestReloadSummaryNamesRunningSessionsOnlyWhenTheyMiss(t *testing.T) {
	old := parseValid(t)
	cur := parseValid(t)
	cur.Servers[0].Projects[0].Path = old.Servers[0].Projects[0].Path
	cur.Servers[0].OwnerIDs = append(cur.Servers[0].OwnerIDs, "100000000000000009")
	if sum := ReloadSummary(Diff(old, cur)); strings.Contains(sum, "Running sessions") || !strings.Contains(sum, "owner_ids (1 added)") {
		t.Fatalf("owners only: %q", sum)
	}
	cur.Claude.Args = []string{"--verbose"}
	if sum := ReloadSummary(Diff(old, cur)); !strings.Contains(sum, "Running sessions keep the settings they started with") {
		t.Fatalf("with [claude] args: %q", sum)
	}
}

func TestDiffRemoved(t *testing.T) {
	old := parseValid(t)
	cur := parseValid(t)
	cur.Servers[0].Projects[0].Path = old.Servers[0].Projects[0].Path
	cur.Servers[0].Projects = nil
	var whats []string
	for _, c := range Diff(old, cur) {
		whats = append(whats, c.What)
		if c.Restart {
			t.Errorf("%q needs no restart", c.What)
		}
	}
	if !slices.Equal(whats, []string{"project home/api removed"}) {
		t.Fatalf("Diff = %q", whats)
	}
	cur.Servers = nil
	if d := Diff(old, cur); len(d) != 1 || d[0].What != "server home removed" || !d[0].Restart {
		t.Fatalf("Diff without the server = %v", d)
	}
}

// A Telegram bot's platform and chat are held by its connection: a restart
// applies them, as a token. The channel ids derived from chat_id and
// topic_id are not changes of their own.
func TestDiffTelegram(t *testing.T) {
	old := parseTG(t, "", "")
	cur := parseTG(t, "", "")
	cur.Servers[0].Projects[0].Path = old.Servers[0].Projects[0].Path
	if d := Diff(old, cur); len(d) != 0 {
		t.Fatalf("Diff of equal Telegram configs = %v", d)
	}
	text := strings.NewReplacer(`chat_id = "-1001234567890"`, `chat_id = "-1009999999999"`, `topic_id = "42"`, `topic_id = "43"`,
		"{dir}", old.Servers[0].Projects[0].Path).Replace(strings.NewReplacer("{server}", "", "{project}", "").Replace(tgTOML))
	cur, err := Parse("[telegram]\napi_base = \"http://127.0.0.1:8081\"\n" + text)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range Diff(old, cur) {
		got[c.What] = c.Restart
	}
	want := map[string]bool{
		"[telegram] api_base":        true,
		"server phone chat_id":       true,
		"project phone/api topic_id": false,
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for what, restart := range want {
		if r, ok := got[what]; !ok || r != restart {
			t.Errorf("%q: restart %v (present %v), want %v; all: %v", what, r, ok, restart, got)
		}
	}

	discord := parseValid(t)
	tg := parseValid(t)
	tg.Servers[0].Projects[0].Path = discord.Servers[0].Projects[0].Path
	tg.Servers[0].Platform = PlatformTelegram
	for _, c := range Diff(discord, tg) {
		if c.What == "server home platform" && !c.Restart {
			t.Errorf("a platform change applied live")
		}
	}
	if !slices.ContainsFunc(Diff(discord, tg), func(c Change) bool { return c.What == "server home platform" }) {
		t.Errorf("platform change not reported: %v", Diff(discord, tg))
	}
}

// The web server's address, certificate and public URL are bound when the
// daemon starts; a link's lifetime is read when a link is made.
func TestDiffWeb(t *testing.T) {
	old := parseValid(t)
	cur := parseValid(t)
	cur.Servers[0].Projects[0].Path = old.Servers[0].Projects[0].Path
	cur.Web = Web{Listen: "0.0.0.0:7878", PublicURL: "https://x.example", TLSCert: "/c", TLSKey: "/k", LinkTTL: Duration{Duration: time.Hour}}
	got := map[string]bool{}
	for _, c := range Diff(old, cur) {
		got[c.What] = c.Restart
	}
	want := map[string]bool{
		"[web] listen": true, "[web] public_url": true, "[web] tls_cert": true, "[web] tls_key": true, "[web] link_ttl": false,
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for what, restart := range want {
		if r, ok := got[what]; !ok || r != restart {
			t.Errorf("%q: restart %v (present %v), want %v", what, r, ok, restart)
		}
	}
}
