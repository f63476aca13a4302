package hook

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/state"
)

// A hand-started Claude (no CCBRIDGE_SESSION) in a project's tree is
// recorded with its tmux server and pane; once taken over, its events
// update the session that took it, not the hand-started one.
func TestHandStartedClaudeIsRecordedAndRoutedWhenTakenOver(t *testing.T) {
	root := t.TempDir() + "/rt"
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store.Routes.Update(ctx, state.RoutesKey, func(r *state.Routes) error {
		r.Routes = []state.Route{{Path: "/w/app", Server: "home", Project: "api", ChannelID: "100"}}
		return nil
	})
	env := map[string]string{state.EnvRuntimeDir: root, "TMUX": "/tmp/tmux-1000/default,4242,0", "TMUX_PANE": "%12"}
	paneEnv = func(k string) string { return env[k] }
	t.Cleanup(func() { paneEnv = os.Getenv })
	hook := func(payload string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(ctx, Stop, []string{"--global"}, strings.NewReader(payload), &out, &errb, func(k string) string { return env[k] }); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	}
	hook(`{"session_id":"cs1","cwd":"/w/app/sub","hook_event_name":"UserPromptSubmit","prompt":"fix the parser"}`)
	l, err := store.Live.Get("cs1")
	if err != nil || l.Socket != "/tmp/tmux-1000/default" || l.Pane != "%12" || l.Cwd != "/w/app/sub" || l.Project != "api" || l.FirstPrompt != "fix the parser" || !l.Busy {
		t.Fatalf("live = %+v, %v", l, err)
	}
	if _, err := store.Sessions.Get("hand-home-api"); err != nil {
		t.Fatalf("the hand-started route is gone: %v", err)
	}

	key := "home-api-t555"
	store.Sessions.Update(ctx, key, func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID, s.ThreadID = "home", "api", "100", "555"
		return nil
	})
	store.Live.Update(ctx, "cs1", func(l *state.Live) error { l.Bound = key; return nil })
	hook(`{"session_id":"cs1","cwd":"/w/app/sub","hook_event_name":"UserPromptSubmit","prompt":"from the phone"}`)
	s, _ := store.Sessions.Get(key)
	if len(s.Prompts) != 1 || s.Prompts[0].Text != "from the phone" || s.ClaudeSessionID != "cs1" {
		t.Fatalf("the taken-over session got no receipt: %+v", s)
	}
	hand, _ := store.Sessions.Get("hand-home-api")
	for _, p := range hand.Prompts {
		if p.Text == "from the phone" {
			t.Fatal("the hand-started route still got the taken-over Claude's prompt")
		}
	}
	hook(`{"session_id":"cs1","cwd":"/w/app/sub","hook_event_name":"SessionEnd"}`)
	if l, _ := store.Live.Get("cs1"); !l.Ended {
		t.Fatalf("SessionEnd not recorded: %+v", l)
	}
}

func TestSocketFromEnv(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/tmux-1000/default,1234,0": "/tmp/tmux-1000/default",
		"/tmp/a,b/sock,99,3":            "/tmp/a,b/sock",
		"":                              "",
		"garbage":                       "",
	} {
		if got := socketFromEnv(in); got != want {
			t.Errorf("socketFromEnv(%q) = %q, want %q", in, got, want)
		}
	}
}

// Tool events of a hand-started Claude, as of any session, only rewrite
// its record when something in it changes (they come by the dozen).
func TestHandStartedToolEventsSkipTheUnchangedWrite(t *testing.T) {
	root := t.TempDir() + "/rt"
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store.Routes.Update(ctx, state.RoutesKey, func(r *state.Routes) error {
		r.Routes = []state.Route{{Path: "/w/app", Server: "home", Project: "api", ChannelID: "100", Progress: "off"}}
		return nil
	})
	env := map[string]string{state.EnvRuntimeDir: root}
	hook := func(payload string) state.Session {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(ctx, PreTool, []string{"--global"}, strings.NewReader(payload), &out, &errb, func(k string) string { return env[k] }); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		s, err := store.Sessions.Get("hand-home-api")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tool := `{"session_id":"cs1","prompt_id":"p1","cwd":"/w/app","hook_event_name":"PostToolUse","tool_name":"Read","tool_use_id":"t1"}`
	first := hook(tool)
	if first.ChannelID != "100" || first.LastEvent != "PostToolUse" {
		t.Fatalf("record = %+v", first)
	}
	if again := hook(tool); !again.LastEventAt.Equal(first.LastEventAt) {
		t.Fatalf("an unchanged tool event rewrote the record: %v then %v", first.LastEventAt, again.LastEventAt)
	}
	if moved := hook(strings.Replace(tool, `"cwd":"/w/app"`, `"cwd":"/w/app/sub"`, 1)); moved.Cwd != "/w/app/sub" {
		t.Fatalf("a tool event in another directory was not recorded: %+v", moved)
	}
}
