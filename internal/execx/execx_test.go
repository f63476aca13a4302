package execx

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExecCapturesStdoutAndStderr(t *testing.T) {
	out, err := Exec{}.Run(context.Background(), Cmd{Args: []string{"sh", "-c", "cat; echo oops >&2; exit 3"}, Stdin: strings.NewReader("in")})
	if string(out) != "in" {
		t.Errorf("stdout = %q, want %q", out, "in")
	}
	var ce *CmdError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *CmdError", err)
	}
	if ce.ExitCode != 3 || strings.TrimSpace(ce.Stderr) != "oops" {
		t.Errorf("CmdError = %+v", ce)
	}
	if !strings.Contains(err.Error(), "oops") {
		t.Errorf("error %q does not lead with stderr", err)
	}
}

func TestExecHonoursDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Exec{}.Run(ctx, Cmd{Args: []string{"sleep", "10"}})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestChildEnvKeepsOnlyListed(t *testing.T) {
	parent := []string{"PATH=/bin", "HOME=/h", "CCBRIDGE_TOKEN_HOME=secret", "LC_ALL=C", "LANG=x"}
	got := ChildEnv(parent, []string{"PATH", "HOME", "LC_*"}, "A=1")
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "A=1"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q, want %q", got, want)
	}
}

type recordingTB struct {
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Errorf(f string, a ...any) { r.errs = append(r.errs, f) }
func (r *recordingTB) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }

func TestFakeReportsUnexpectedAndMissing(t *testing.T) {
	tb := &recordingTB{}
	f := NewFake(tb, Call{Args: []string{"a"}}, Call{Args: []string{"b"}})
	if _, err := f.Run(context.Background(), Cmd{Args: []string{"x"}}); err == nil {
		t.Error("unexpected argv returned no error")
	}
	for _, c := range tb.cleanups {
		c()
	}
	if len(tb.errs) != 2 {
		t.Errorf("got %d errors, want 2 (mismatch + never ran): %q", len(tb.errs), tb.errs)
	}
}

// A command past its deadline is asked to stop (SIGTERM, which git answers
// by removing its lock) before it is killed.
func TestExecTermsBeforeKilling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// The trap runs once sleep (in the background, waited for) is interrupted.
	out, err := Exec{}.Run(ctx, Cmd{Args: []string{"sh", "-c", `trap 'echo got-TERM; exit 143' TERM; echo ready; sleep 10 & wait`}})
	if !strings.Contains(string(out), "got-TERM") {
		t.Fatalf("the command was not sent SIGTERM first: stdout %q, err %v", out, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
}

// A command that ignores SIGTERM is still killed once the grace is over.
func TestExecKillsWhatIgnoresTerm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Exec{}.Run(ctx, Cmd{Args: []string{"sh", "-c", `trap '' TERM; while :; do sleep 0.05; done`}})
	if err == nil {
		t.Fatal("no error")
	}
	if d := time.Since(start); d > waitDelay+3*time.Second {
		t.Fatalf("took %v", d)
	}
}
