// Package voice turns a voice message's audio into text with the command the
// user configured ([voice].command). It bundles no speech model and knows
// nothing of Discord: it runs a program on a file and reads its output.
package voice

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
)

// StderrTail is how much of a failed command's stderr a failure carries: the
// end says why.
const StderrTail = 400

// MaxWords bounds a transcript: Discord's modal fields hold 4,000 characters.
const MaxWords = 4000

// ErrEmpty says the command ran and printed nothing.
var ErrEmpty = errors.New("the transcript is empty")

// Error is a transcription that failed: the command's exit or time-out, with
// the end of what it printed on stderr.
type Error struct {
	Command  string
	TimedOut bool
	Timeout  time.Duration
	Stderr   string // the last StderrTail characters
	Err      error
}

func (e *Error) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("%s did not finish within %s", e.Command, e.Timeout)
	}
	return fmt.Sprintf("%s failed: %v", e.Command, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Transcriber runs the configured command.
type Transcriber struct {
	Config config.Voice
	Runner execx.Runner
	// Secrets names environment variables the command must not see (the
	// bots' token_env): it gets the daemon's environment less these.
	Secrets []string
}

// Argv is the command for one audio file: {file} replaced, ~/ expanded in
// the program's path.
func (t Transcriber) Argv(file string) ([]string, error) {
	if !t.Config.Enabled() {
		return nil, errors.New("no [voice] command is configured")
	}
	argv := make([]string, len(t.Config.Command))
	for i, a := range t.Config.Command {
		argv[i] = strings.ReplaceAll(a, config.VoiceFile, file)
	}
	prog, err := config.ExpandHome(argv[0])
	if err != nil {
		return nil, err
	}
	argv[0] = prog
	return argv, nil
}

// Transcribe runs the command on file and returns what it printed, trimmed.
// It gives up after [voice].timeout.
func (t Transcriber) Transcribe(ctx context.Context, file string) (string, error) {
	argv, err := t.Argv(file)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, t.Config.Timeout.Duration)
	defer cancel()
	out, err := t.Runner.Run(ctx, execx.Cmd{Args: argv, Dir: filepath.Dir(file), Env: t.env()})
	if err != nil {
		e := &Error{Command: filepath.Base(argv[0]), Timeout: t.Config.Timeout.Duration, Err: err,
			TimedOut: errors.Is(ctx.Err(), context.DeadlineExceeded)}
		var ce *execx.CmdError
		if errors.As(err, &ce) {
			e.Stderr = tail(strings.TrimSpace(ce.Stderr), StderrTail)
			if ce.ExitCode >= 0 {
				e.Err = fmt.Errorf("exit status %d", ce.ExitCode)
			}
		}
		return "", e
	}
	words := strings.TrimSpace(string(out))
	if words == "" {
		return "", ErrEmpty
	}
	if !utf8.ValidString(words) {
		words = strings.ToValidUTF8(words, "�")
	}
	if r := []rune(words); len(r) > MaxWords {
		words = string(r[:MaxWords])
	}
	return words, nil
}

// env is the daemon's environment without the secrets.
func (t Transcriber) env() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(t.Secrets, name) {
			out = append(out, kv)
		}
	}
	return out
}

// tail keeps the last n characters of s.
func tail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n:])
}
