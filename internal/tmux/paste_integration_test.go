//go:build integration

package tmux_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

const envRecorder = "CCBRIDGE_TEST_RECORDER"

// TestMain lets the test binary run as the recorder program inside a pane.
func TestMain(m *testing.M) {
	if out := os.Getenv(envRecorder); out != "" {
		os.Exit(record(out))
	}
	os.Exit(m.Run())
}

// record puts the terminal in raw mode (no echo, no line editing, no signal
// keys, no CR/LF translation), asks for bracketed paste like Claude Code
// does, and appends every byte it reads to out.
func record(out string) int {
	fd := int(os.Stdin.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		fmt.Println("termios:", err)
		return 1
	}
	raw := *t
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		fmt.Println("termios:", err)
		return 1
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	// tmux handles pane output in order, so once "recorder ready" is on the
	// screen the bracketed-paste request before it has taken effect.
	os.Stdout.WriteString("\x1b[?2004hrecorder ready\r\n")
	buf := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			f.Write(buf[:n])
		}
		if err != nil {
			return 0
		}
	}
}

func TestPasteCorpusArrivesExactly(t *testing.T) {
	srv := tmuxtest.New(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "recorded")
	exe, _ := os.Executable()
	pane, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "paste", Window: "recorder", Dir: t.TempDir(),
		Env: map[string]string{envRecorder: out}, Argv: []string{exe}, Width: 120, Height: 40})
	if err != nil {
		t.Fatal(err)
	}
	tmuxtest.WaitScreen(t, srv, pane, "recorder ready", 10*time.Second)

	big := strings.Repeat("0123456789abcdef\n", 8192/17+1)[:8192]
	corpus := []struct{ name, in, want string }{
		{"single line", "hello claude", "hello claude"},
		{"multi-line with fences", "fix this:\n```go\nfunc main() {}\n```\ndone", "fix this:\n```go\nfunc main() {}\n```\ndone"},
		{"CRLF and CR", "one\r\ntwo\rthree", "one\ntwo\nthree"},
		{"unicode", "héllo wörld — 日本語 😀 ∑", "héllo wörld — 日本語 😀 ∑"},
		{"8 KB", big, big},
		{"shell metacharacters", "run `ls` and $(rm -rf ~) and ${HOME} ; | & > <", "run `ls` and $(rm -rf ~) and ${HOME} ; | & > <"},
		{"key names as words", "C-c Enter Escape C-u BTab Tab", "C-c Enter Escape C-u BTab Tab"},
		{"ESC bytes", "a\x1bb\x1b[31mred\x1b[0m", "ab[31mred[0m"},
		{"paste end sequence", "before\x1b[201~after\x1b[200~x", "before[201~after[200~x"},
		{"other controls", "tab\tkept, ctrl-c\x03 ctrl-d\x04 del\x7f nul\x00 bs\x08", "tab\tkept, ctrl-c ctrl-d del nul bs"},
	}
	for i, c := range corpus {
		if err := srv.PasteTextIf(ctx, pane, tmux.Guard{}, c.in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := srv.SendKeys(ctx, pane, tmux.KeyEnter); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		entries := waitEntries(t, out, i+1)
		want := "\x1b[200~" + c.want + "\x1b[201~\r"
		if got := entries[i]; got != want {
			t.Errorf("%s:\n got  %q\n want %q", c.name, trim(got), trim(want))
		}
	}
}

// waitEntries waits until the recording holds n pastes, each ending with the
// paste end marker and the Enter key (CR), and returns them.
func waitEntries(t *testing.T, file string, n int) []string {
	t.Helper()
	const end = "\x1b[201~\r"
	deadline := time.Now().Add(10 * time.Second)
	var data string
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(file)
		data = string(b)
		if strings.Count(data, end) >= n {
			parts := strings.SplitAfter(data, end)
			return parts[:n]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("recording has %d of %d pastes: %q", strings.Count(data, end), n, trim(data))
	return nil
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:150] + "…" + s[len(s)-150:]
	}
	return s
}

func TestPanesAndLiveness(t *testing.T) {
	srv := tmuxtest.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	var ids []string
	// More windows than a split 80x24 window could hold.
	for i := range 6 {
		id, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "live", Window: fmt.Sprintf("w%d", i), Dir: dir,
			Env: map[string]string{"CCBRIDGE_SESSION": fmt.Sprintf("s%d", i)}, Argv: []string{"sh", "-c", "echo \"$CCBRIDGE_SESSION in $PWD\"; exec sleep 600"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	tmuxtest.WaitScreen(t, srv, ids[3], "s3 in "+dir, 5*time.Second)
	panes, err := srv.ListPanes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(panes) != 6 || panes[0].Session != "live" || panes[5].Window != "w5" || panes[2].PID == 0 {
		t.Fatalf("ListPanes = %+v", panes)
	}
	if err := srv.KillPane(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Capture(ctx, ids[0], 0); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("Capture of killed pane = %v, want ErrPaneGone", err)
	}
	srv.KillServer(ctx)
	if _, err := srv.ListPanes(ctx); err == nil {
		t.Fatal("ListPanes after kill-server succeeded")
	}
}

func TestServerEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("CCBRIDGE_TOKEN_HOME", "secret-bot-token")
	srv := tmuxtest.New(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "env")
	_, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "env", Window: "env", Dir: t.TempDir(),
		Argv: []string{"sh", "-c", "env > " + out + "; sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var env []byte
	for time.Now().Before(deadline) && len(env) == 0 {
		env, _ = os.ReadFile(out)
		time.Sleep(20 * time.Millisecond)
	}
	if len(env) == 0 {
		t.Fatal("pane wrote no environment")
	}
	if strings.Contains(string(env), "secret-bot-token") {
		t.Fatal("the daemon's token reached the pane")
	}
	if !strings.Contains(string(env), "PATH=") {
		t.Fatalf("PATH missing from the pane:\n%s", env)
	}
}
