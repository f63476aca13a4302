package execx

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// TB is the part of testing.TB that Fake needs; taking an interface keeps the
// testing package out of production binaries.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Call is one expected command and its scripted result.
type Call struct {
	Args   []string
	Stdout string
	Err    error  // returned as is (use a *CmdError to script an exit)
	Stdin  string // when non-empty, the stdin the command must receive
}

// Fake is a strict Runner for unit tests: commands must arrive in the
// expected order with the expected argv, and expectations never met fail the
// test at cleanup.
type Fake struct {
	t    TB
	mu   sync.Mutex // guards next and got
	want []Call
	next int
	got  []Cmd
}

// NewFake returns a Fake that expects calls in order.
func NewFake(t TB, calls ...Call) *Fake {
	f := &Fake{t: t, want: calls}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.want[f.next:] {
			t.Errorf("execx.Fake: expected command never ran: %q", c.Args)
		}
	})
	return f
}

// Run implements Runner.
func (f *Fake) Run(_ context.Context, c Cmd) ([]byte, error) {
	f.t.Helper()
	var stdin string
	if c.Stdin != nil {
		b, _ := io.ReadAll(c.Stdin)
		stdin = string(b)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, c)
	if f.next >= len(f.want) {
		f.t.Errorf("execx.Fake: unexpected command %q", c.Args)
		return nil, fmt.Errorf("execx.Fake: unexpected command %q", c.Args)
	}
	w := f.want[f.next]
	f.next++
	if !slices.Equal(w.Args, c.Args) {
		f.t.Errorf("execx.Fake: command %d:\n got  %q\n want %q", f.next, c.Args, w.Args)
		return nil, fmt.Errorf("execx.Fake: unexpected command %q", c.Args)
	}
	if w.Stdin != "" && w.Stdin != stdin {
		f.t.Errorf("execx.Fake: command %q stdin:\n got  %q\n want %q", c.Args, stdin, w.Stdin)
	}
	return []byte(w.Stdout), w.Err
}

// Commands returns the commands run so far.
func (f *Fake) Commands() []Cmd {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// Exit builds the error a command exiting with code and stderr returns.
func Exit(code int, stderr string, args ...string) *CmdError {
	return &CmdError{Args: args, ExitCode: code, Stderr: stderr, Err: fmt.Errorf("exit status %d", code)}
}

// ChildEnv builds a child environment from the parent's, keeping only the
// variables named in keep (and those with a kept prefix ending in "*"), then
// adding extra. It never copies the environment wholesale, so a bot token in
// the daemon's environment cannot leak into a child.
func ChildEnv(parent []string, keep []string, extra ...string) []string {
	var out []string
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		for _, k := range keep {
			if k == name || (strings.HasSuffix(k, "*") && strings.HasPrefix(name, strings.TrimSuffix(k, "*"))) {
				out = append(out, kv)
				break
			}
		}
	}
	return append(out, extra...)
}
