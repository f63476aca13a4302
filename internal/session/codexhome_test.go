package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ccbridge/ccbridge/internal/config"
)

// /sessions of a Codex project reads the rollouts of the Codex that
// ccbridge starts: [codex].env's CODEX_HOME, else its HOME's .codex, else
// the daemon's.
func TestCodexHomeIsThePanesOwn(t *testing.T) {
	t.Setenv("CODEX_HOME", "/daemon/codex")
	t.Setenv("HOME", "/daemon/home")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CODEX_HOME": "/cfg/codex", "HOME": "/cfg/home"}, "/cfg/codex"},
		{map[string]string{"HOME": "/cfg/home"}, filepath.Join("/cfg/home", ".codex")},
		{nil, "/daemon/codex"},
	} {
		cfg := &config.Config{}
		cfg.Codex.Env = c.env
		if got := CodexHome(cfg); got != c.want {
			t.Errorf("env %v: %q, want %q", c.env, got, c.want)
		}
	}
}

// A Codex project's past conversations are Codex's rollouts of its folder,
// which the core picks by the project: the front end never names the
// agent. Their recent output reads as Codex writes it.
func TestCodexProjectsHistoryIsCodexs(t *testing.T) {
	m, _, target := newCodexManager(t)
	home := t.TempDir()
	cfg := *m.config()
	cfg.Codex.Env = map[string]string{"CODEX_HOME": home}
	m.Reconfigure(&cfg)
	const id = "01a222e3-a253-77e3-89c2-c2978228edc7"
	dir := filepath.Join(home, "sessions", "2026", "11", "28")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(dir, "rollout-2026-11-28T16-01-13-"+id+".jsonl")
	body := `{"type":"session_meta","payload":{"id":"` + id + `","cwd":"` + target.Dir + `"}}` + "\n" +
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"UserMessage","content":[{"type":"text","text":"hello codex"}]}}}` + "\n" +
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"AgentMessage","content":[{"type":"Text","text":"hi there"}]}}}` + "\n"
	if err := os.WriteFile(rollout, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	list, err := m.History(target.Server, target.Project, target.Dir, 5)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].FirstPrompt != "hello codex" {
		t.Fatalf("history %+v, %v", list, err)
	}
	if _, ok := m.Conversation(target.Server, target.Project, target.Dir, id); !ok {
		t.Error("the conversation is not found by its id")
	}
	if list, _ := m.History(target.Server, "other", target.Dir, 5); len(list) != 0 {
		t.Errorf("a project that is not Codex's lists %+v", list)
	}
	a, err := Recent(config.AgentCodex, rollout, 10)
	if err != nil || len(a.Output) != 1 || a.Output[0] != "hi there" || a.Turns != 1 {
		t.Errorf("recent %+v, %v", a, err)
	}
}
