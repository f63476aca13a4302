package tmux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

var sock = []string{"tmux", "-L", "ccb"}

func argv(a ...string) []string { return append(append([]string{}, sock...), a...) }

func newFake(t *testing.T, calls ...execx.Call) *Server {
	return New(execx.NewFake(t, calls...), Options{Socket: "ccb", Env: []string{"PATH=/bin"}})
}

func TestNewPaneCreatesSessionWhenMissing(t *testing.T) {
	tmp := fmt.Sprintf("ccbridge-new-%d-%d", os.Getpid(), windowSeq.Load()+1)
	win := "=ccbridge-home:=" + tmp
	common := []string{"-d", "-P", "-F", "#{pane_id}", "-n", tmp, "-c", "/src/##api", "-e", "A=1", "-e", `B=2\;`, "--", "claude", "--x",
		";", "set-option", "-p", "-t", win, "@ccbridge_session", "home-api",
		";", "rename-window", "-t", win, "api ##1", ";", "set-option", "-s", "focus-events", "on",
		// The session's own environment must not keep the pane's variables.
		";", "set-environment", "-t", "=ccbridge-home", "-u", "A", ";", "set-environment", "-t", "=ccbridge-home", "-u", "B"}
	s := newFake(t,
		execx.Call{Args: argv(append([]string{"new-window", "-t", "=ccbridge-home:"}, common...)...),
			Err: execx.Exit(1, "no server running on /tmp/tmux-0/ccb\n")},
		execx.Call{Args: argv(append([]string{"new-session", "-s", "ccbridge-home", "-x", "100", "-y", "50"}, common...)...),
			Stdout: "%7\n"},
	)
	id, err := s.NewPane(context.Background(), PaneSpec{Session: "ccbridge-home", Window: "api #1", Tag: "home-api", Dir: "/src/#api",
		Env: map[string]string{"B": "2;", "A": "1"}, Argv: []string{"claude", "--x"}, Width: 100, Height: 50})
	if err != nil || id != "%7" {
		t.Fatalf("NewPane = %q, %v", id, err)
	}
}

func TestNewPaneRejectsBadSessionName(t *testing.T) {
	s := newFake(t)
	if _, err := s.NewPane(context.Background(), PaneSpec{Session: "a.b", Argv: []string{"x"}}); err == nil {
		t.Fatal("accepted a session name with a dot")
	}
}

func TestPasteTextCommands(t *testing.T) {
	rec := &recorder{out: "ccbridge:sent\n"}
	s := New(rec, Options{SocketPath: "/tmp/s", Env: []string{}})
	if err := s.PasteTextIf(context.Background(), "%3", Guard{}, "a\r\nb\x1b[201~c"); err != nil {
		t.Fatal(err)
	}
	if len(rec.cmds) != 2 {
		t.Fatalf("ran %d commands, want 2", len(rec.cmds))
	}
	load, paste := rec.cmds[0], rec.cmds[1]
	buf := load.Args[5]
	wantLoad := []string{"tmux", "-S", "/tmp/s", "load-buffer", "-b", buf, "-"}
	wantPaste := []string{"tmux", "-S", "/tmp/s", "if-shell", "-F", "-t", "%3", "1",
		"paste-buffer -p -r -d -b " + buf + " -t %3 ; display-message -p ccbridge:sent", "display-message -p ccbridge:refused"}
	if !slices.Equal(load.Args, wantLoad) || !slices.Equal(paste.Args, wantPaste) {
		t.Fatalf("commands:\n%q\n%q", load.Args, paste.Args)
	}
	if rec.stdin[0] != "a\nb[201~c" {
		t.Errorf("stdin = %q", rec.stdin[0])
	}
	if err := s.PasteTextIf(context.Background(), "%3", Guard{}, "a"); err != nil {
		t.Fatal(err)
	}
	if rec.cmds[2].Args[5] == buf {
		t.Error("buffer name reused")
	}
}

func TestSendKeysAllowsOnlyKnownKeys(t *testing.T) {
	s := newFake(t, execx.Call{Args: argv("send-keys", "-t", "%1", "C-u", "Enter", "3")})
	if err := s.SendKeys(context.Background(), "%1", KeyClearLine, KeyEnter, "3"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []Key{"hello", "C-x", "Enter Enter", "12", ""} {
		if err := s.SendKeys(context.Background(), "%1", k); err == nil {
			t.Errorf("key %q accepted", k)
		}
	}
}

func TestErrorsAreTyped(t *testing.T) {
	s := newFake(t,
		execx.Call{Args: argv("capture-pane", "-p", "-J", "-t", "%9", "-S", "-10"), Err: execx.Exit(1, "can't find pane: %9\n")},
		execx.Call{Args: argv("list-panes", "-a", "-F", paneFormat), Err: execx.Exit(1, "no server running on /tmp/tmux-0/ccb\n")},
		execx.Call{Args: argv("kill-pane", "-t", "%9"), Err: execx.Exit(1, "can't find pane: %9\n")},
	)
	if _, err := s.Capture(context.Background(), "%9", 10); !errors.Is(err, ErrPaneGone) {
		t.Errorf("Capture err = %v, want ErrPaneGone", err)
	}
	if _, err := s.ListPanes(context.Background()); !errors.Is(err, ErrNoServer) {
		t.Errorf("ListPanes err = %v, want ErrNoServer", err)
	}
	if err := s.KillPane(context.Background(), "%9"); err != nil {
		t.Errorf("KillPane of a gone pane = %v, want nil", err)
	}
}

func TestParsePanes(t *testing.T) {
	out := "%0\t0\t4242\tclaude\tccbridge-home\tapi\thome-api\t77\t/src/api\n%1\t1\t4250\tbash\tccbridge-home\tweb thread\t\t77\t/src/web\n"
	panes, err := parsePanes(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pane{
		{ID: "%0", PID: 4242, Command: "claude", Session: "ccbridge-home", Window: "api", Tag: "home-api", ServerPID: 77, Path: "/src/api"},
		{ID: "%1", Dead: true, PID: 4250, Command: "bash", Session: "ccbridge-home", Window: "web thread", ServerPID: 77, Path: "/src/web"},
	}
	if len(panes) != 2 || panes[0] != want[0] || panes[1] != want[1] {
		t.Fatalf("parsePanes = %+v", panes)
	}
	if _, err := parsePanes("garbage\n"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain":                  "plain",
		"a\r\nb\rc\n":            "a\nb\nc\n",
		"tab\there":              "tab\there",
		"esc\x1b[201~end":        "esc[201~end",
		"bell\x07nul\x00del\x7f": "bellnuldel",
		"c1\u009bx":              "c1x",
		"ünï😀 `$(rm -rf ~)` C-c": "ünï😀 `$(rm -rf ~)` C-c",
		"bad\xffutf8":            "bad\uFFFDutf8",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

type recorder struct {
	cmds  []execx.Cmd
	stdin []string
	out   string // what every command prints
}

func (r *recorder) Run(_ context.Context, c execx.Cmd) ([]byte, error) {
	r.cmds = append(r.cmds, c)
	s := ""
	if c.Stdin != nil {
		b, _ := io.ReadAll(c.Stdin)
		s = string(b)
	}
	r.stdin = append(r.stdin, s)
	return []byte(r.out), nil
}

func TestGuardFormat(t *testing.T) {
	g := Guard{With: []string{"Switch model? "}, Without: []string{"a,b}#{x}", "[*]"}}
	want := `#{&&:#{C:Switch model\?},#{&&:#{?#{C:a#,b#}##{x#}},0,1},#{?#{C:\[\*]},0,1}}}`
	if got := g.format(); got != want {
		t.Fatalf("format =\n %s\nwant\n %s", got, want)
	}
	if got := (Guard{}).format(); got != "1" {
		t.Fatalf("empty guard = %q", got)
	}
}

func TestSendKeysIfReadsTheOutcome(t *testing.T) {
	cond := Guard{Without: []string{"Do you want to proceed?"}}.format()
	call := func(out string) execx.Call {
		return execx.Call{Args: argv("if-shell", "-F", "-t", "%3", cond, "send-keys -t %3 Enter ; display-message -p ccbridge:sent", "display-message -p ccbridge:refused"), Stdout: out}
	}
	s := newFake(t, call("ccbridge:sent\n"), call("ccbridge:refused\n"), call(""))
	g := Guard{Without: []string{"Do you want to proceed?"}}
	if err := s.SendKeysIf(context.Background(), "%3", g, KeyEnter); err != nil {
		t.Fatal(err)
	}
	if err := s.SendKeysIf(context.Background(), "%3", g, KeyEnter); !errors.Is(err, ErrRefused) {
		t.Fatalf("refused: err = %v", err)
	}
	if err := s.SendKeysIf(context.Background(), "%3", g, KeyEnter); err == nil {
		t.Fatal("no outcome printed, yet success")
	}
	if err := s.SendKeysIf(context.Background(), "%3; kill-server", g, KeyEnter); err == nil {
		t.Fatal("a pane that is not an id reached a command string")
	}
}

// A server another client is still starting (its first session not made
// yet) answers list-panes with "no current target": it has no panes.
func TestListPanesOfAServerWithoutSessions(t *testing.T) {
	s := newFake(t, execx.Call{Args: argv("list-panes", "-a", "-F", paneFormat), Err: execx.Exit(1, "no current target\n")})
	if panes, err := s.ListPanes(context.Background()); err != nil || len(panes) != 0 {
		t.Fatalf("ListPanes = %v, %v; want no panes", panes, err)
	}
}

// TMUX_TMPDIR decides where tmux -L puts its socket: a command without it
// talks to another server than `tmux -L ccbridge attach` in the user's shell.
func TestTmuxCommandsKeepTMUXTMPDIR(t *testing.T) {
	t.Setenv("TMUX_TMPDIR", "/run/user/1000/tmuxes")
	t.Setenv("DISCORD_TOKEN", "secret")
	rec := &recorder{out: "%1\t0\t1\tclaude\ts\tw\t\t7\t/\n"}
	if _, err := New(rec, Options{Socket: "ccb"}).ListPanes(context.Background()); err != nil {
		t.Fatal(err)
	}
	env := rec.cmds[0].Env
	if !slices.Contains(env, "TMUX_TMPDIR=/run/user/1000/tmuxes") {
		t.Errorf("TMUX_TMPDIR dropped from the tmux command's environment: %q", env)
	}
	if slices.Contains(env, "DISCORD_TOKEN=secret") {
		t.Errorf("a token reached tmux: %q", env)
	}
}
