// Package execx is the only package that starts external programs (tmux, git).
// Commands are argv slices, never shell strings; every run has a deadline; a
// failure carries the program's stderr. It imports no other internal package.
package execx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Cmd is one program invocation.
type Cmd struct {
	Args  []string  // Args[0] is the program
	Dir   string    // working directory; empty = inherit
	Env   []string  // full environment; nil = inherit the parent's
	Stdin io.Reader // optional
}

func (c Cmd) String() string { return strings.Join(c.Args, " ") }

// Runner runs commands. The daemon uses Exec; unit tests use a Fake.
type Runner interface {
	// Run runs cmd to completion and returns its stdout.
	Run(ctx context.Context, cmd Cmd) ([]byte, error)
}

// CmdError is returned when a command exits non-zero or cannot start.
type CmdError struct {
	Args     []string
	ExitCode int // -1 when the program did not start or was killed
	Stderr   string
	Err      error
}

func (e *CmdError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	name := ""
	if len(e.Args) > 0 {
		name = e.Args[0]
		if len(e.Args) > 1 {
			name += " " + e.Args[1]
		}
	}
	return fmt.Sprintf("%s: %s", name, msg)
}

func (e *CmdError) Unwrap() error { return e.Err }

// DefaultTimeout bounds a command whose context has no deadline: a hung tmux
// or git must never hang the daemon.
const DefaultTimeout = 30 * time.Second

// waitDelay is how long a program has, once told to stop (SIGTERM), before
// it is killed, and how long Wait then waits for output pipes: a
// grandchild holding stdout open must not hang the caller.
const waitDelay = 2 * time.Second

// Exec runs commands with os/exec.
type Exec struct{}

// Run implements Runner.
func (Exec) Run(ctx context.Context, c Cmd) ([]byte, error) {
	if len(c.Args) == 0 {
		return nil, errors.New("execx: empty command")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.Stdin = c.Stdin
	// SIGTERM first: git removes its index.lock and stops cleanly on it,
	// where a SIGKILL mid-merge or mid-commit leaves the lock, and half
	// the work, behind.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	code := -1
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.Exited() {
		code = exitErr.ExitCode()
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return stdout.Bytes(), &CmdError{Args: c.Args, ExitCode: code, Stderr: stderr.String(), Err: err}
}

// LookPath reports the absolute path of a program on PATH.
func LookPath(name string) (string, error) { return exec.LookPath(name) }
