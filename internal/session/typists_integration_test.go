//go:build integration

package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/term"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// envFakeClaude makes this test binary a stand-in for Claude Code's input
// box (see fakeClaude): the value is the file it appends submitted prompts to.
const envFakeClaude = "CCBRIDGE_TEST_FAKE_CLAUDE"

func init() {
	if out := os.Getenv(envFakeClaude); out != "" {
		fakeClaude(out)
		os.Exit(0)
	}
}

// fakeClaude draws an input box between rules, as Claude Code does, and
// takes bracketed pastes, C-u and Enter like it: a submitted prompt is
// appended (JSON, one a line) to out and recorded as the session's
// UserPromptSubmit receipt a moment later, as the hook would.
func fakeClaude(out string) {
	if st, err := term.MakeRaw(0); err == nil {
		defer term.Restore(0, st)
	}
	store, err := state.OpenStore(os.Getenv(state.EnvRuntimeDir))
	if err != nil {
		panic(err)
	}
	key := os.Getenv(state.EnvSession)
	f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	var box []byte
	draw := func() {
		fmt.Printf("\x1b[?2004h\x1b[H\x1b[2Jfake claude\r\n%s\r\n❯ %s\r\n%s\r\n  ⏸ manual mode on\r\n", strings.Repeat("─", 40), box, strings.Repeat("─", 40))
	}
	draw()
	in := bufio.NewReader(os.Stdin)
	var pending []byte
	pasting := false
	for {
		b, err := in.ReadByte()
		if err != nil {
			return
		}
		pending = append(pending, b)
		switch {
		case bytes.HasSuffix(pending, []byte("\x1b[200~")):
			pasting, pending = true, nil
			continue
		case bytes.HasSuffix(pending, []byte("\x1b[201~")):
			box = append(box, pending[:len(pending)-6]...)
			pasting, pending = false, nil
		case pasting || (b == 0x1b || bytes.HasPrefix(pending, []byte{0x1b})) && len(pending) < 6:
			continue
		case b == 0x15:
			box, pending = nil, nil
		case b == '\r':
			text := string(box)
			box, pending = nil, nil
			line, _ := json.Marshal(text)
			f.Write(append(line, '\n'))
			draw()
			time.Sleep(50 * time.Millisecond) // the hook's run
			store.Sessions.Update(context.Background(), key, func(s *state.Session) error {
				s.AddPrompt(state.Prompt{At: time.Now(), Text: text})
				return nil
			})
		default:
			box, pending = append(box, pending...), nil
		}
		draw()
	}
}

// Two session managers on one runtime dir and one tmux server (the daemon
// and `ccbridge mcp`) send into one session at the same time: every
// message arrives whole, once, each sender's in its order.
func TestTwoManagersNeverInterleaveInOnePane(t *testing.T) {
	srv := tmuxtest.New(t)
	rt := filepath.Join(t.TempDir(), "rt")
	prompts := filepath.Join(t.TempDir(), "prompts")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(fmt.Sprintf(`
[claude]
command = %q
env = { %s = %q }
[[servers]]
name = "home"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = ["100000000000000002"]
  [[servers.projects]]
  name = "api"
  channel_id = "100000000000000003"
  path = %q
`, exe, envFakeClaude, prompts, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	target, err := ProjectTarget(cfg, cfg.Servers[0], cfg.Servers[0].Projects[0])
	if err != nil {
		t.Fatal(err)
	}
	target.TmuxSession = "typists"
	manager := func() *Manager {
		store, err := state.OpenStore(rt)
		if err != nil {
			t.Fatal(err)
		}
		sock := srv.SocketArgs()
		m, err := New(Options{Config: cfg, Store: store, Panes: tmux.New(execx.Exec{}, tmux.Options{SocketPath: sock[1]}),
			HookStop: "/bin/true", HookPretool: "/bin/true", StartTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := manager(), manager()
	ctx := context.Background()
	if _, _, err := a.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	if _, started, err := b.Ensure(ctx, target); err != nil || started {
		t.Fatalf("the second manager did not adopt the pane: started=%v %v", started, err)
	}
	const each = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for name, m := range map[string]*Manager{"daemon": a, "mcp": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := Send(ctx, m, target.Key, fmt.Sprintf("message %d from the %s front end", i, name), SendOptions{DialogWait: 5 * time.Second}); err != nil {
					errs <- fmt.Errorf("%s %d: %w", name, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	raw, err := os.ReadFile(prompts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var s string
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("prompt line %q: %v", line, err)
		}
		got = append(got, s)
	}
	for _, name := range []string{"daemon", "mcp"} {
		var mine []string
		for _, p := range got {
			if strings.Contains(p, name) {
				mine = append(mine, p)
			}
		}
		var want []string
		for i := range each {
			want = append(want, fmt.Sprintf("message %d from the %s front end", i, name))
		}
		if !slices.Equal(mine, want) {
			t.Errorf("%s's messages as Claude got them:\n%q\nwant\n%q", name, mine, want)
		}
	}
	if len(got) != 2*each {
		t.Errorf("Claude got %d prompts, want %d:\n%q", len(got), 2*each, got)
	}
}
