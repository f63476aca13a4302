package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ccbridge/ccbridge/internal/prompt"
	"github.com/ccbridge/ccbridge/internal/session"
)

// A dialog Claude shows in its terminal that no hook reports (the
// auto-mode nudge, folder trust, any a later release adds) is a
// pendingQuestion of type "dialog" here, its choices as options, answered
// with claude_respond like any other: the choice is pressed in the
// terminal, only while that same dialog is open. Nothing answers it for
// the client.

// KindDialog is the pendingQuestion type of such a dialog.
const KindDialog = "dialog"

// dialogPrefix starts the id of a dialog's pendingQuestion; the rest is
// the dialog's hash (session.Dialog.Hash).
const dialogPrefix = "dialog-"

// dialogSessions is what dialogs need of the session manager.
type dialogSessions interface {
	Dialog(ctx context.Context, key string) (session.Dialog, bool, error)
	AnswerDialog(ctx context.Context, key, hash string, choice int) error
}

// screenDialog returns the dialog a session this server started shows, as
// a pending question, when no hook request stands for it (the caller
// checks those first; session.Manager.Dialog leaves out the dialogs hooks
// report, whose card may have closed).
func (s *Server) screenDialog(ctx context.Context, key string) (prompt.Pending, bool) {
	ds, ok := s.opt.Sessions.(dialogSessions)
	if !ok || key == "" || !s.ours(key) {
		return prompt.Pending{}, false
	}
	d, ok, err := ds.Dialog(ctx, key)
	if err != nil || !ok {
		return prompt.Pending{}, false
	}
	return prompt.Pending{ID: dialogPrefix + d.Hash, Type: KindDialog,
		Questions: []prompt.Question{{Question: d.Text, Options: slices.Clone(d.Choices)}}}, true
}

// respondDialog presses the choice answers[0] names (its label, or its
// number from 1) in the dialog id names, in a session this server started
// only: a Discord session's dialog is its channel's, another server's is
// its client's.
func (s *Server) respondDialog(ctx context.Context, in RespondInput) (RespondOutput, error) {
	key, _, ok := s.find(ctx, in.SessionID)
	ds, can := s.opt.Sessions.(dialogSessions)
	if !ok || !can {
		return RespondOutput{}, toolError("no pending question with id %q in session %s", in.ID, in.SessionID)
	}
	if !s.ours(key) {
		return RespondOutput{}, toolError("no pending question with id %q in session %s here: this server did not start it, so its dialogs are answered where it runs", in.ID, in.SessionID)
	}
	d, shown, err := ds.Dialog(ctx, key)
	if err != nil || !shown || dialogPrefix+d.Hash != in.ID {
		return RespondOutput{}, toolError("question %s is no longer pending: the dialog is not on Claude's screen", in.ID)
	}
	if len(in.Answers) != 1 {
		return RespondOutput{}, toolError("a dialog takes one answer, one of: %s", strings.Join(d.Choices, " | "))
	}
	choice := slices.Index(d.Choices, strings.TrimSpace(in.Answers[0]))
	if n, err := strconv.Atoi(strings.TrimSpace(in.Answers[0])); choice < 0 && err == nil && n >= 1 && n <= len(d.Choices) {
		choice = n - 1
	}
	if choice < 0 {
		return RespondOutput{}, toolError("%q is not a choice of this dialog: %s", in.Answers[0], strings.Join(d.Choices, " | "))
	}
	switch err := ds.AnswerDialog(ctx, key, d.Hash, choice); {
	case errors.Is(err, session.ErrDialogChanged):
		return RespondOutput{}, toolError("question %s is no longer pending: the dialog changed", in.ID)
	case err != nil:
		return RespondOutput{}, toolError("could not answer: %v", err)
	}
	s.opt.Log.Info("a dialog in Claude's terminal was answered over MCP", "session", in.SessionID, "choice", d.Choices[choice])
	return RespondOutput{Decided: true, Outcome: fmt.Sprintf("chose %q in the terminal", d.Choices[choice])}, nil
}

// DialogAtStartError says a Claude stopped at a dialog before its input box
// (folder trust, for a directory Claude Code never trusted): it has no
// session id until the dialog is answered, so the call ends at once and
// names it, and its pane is left for the person to answer.
type DialogAtStartError struct {
	Dialog session.Dialog
	Attach string // how to reach the pane
}

func (e *DialogAtStartError) Error() string {
	return fmt.Sprintf("Claude is asking this in its terminal before it starts, and ccbridge never answers it for you: %q (choices: %s). Answer it there (%s), then use claude_list to find the session",
		firstLine(e.Dialog.Text), strings.Join(e.Dialog.Choices, " | "), e.Attach)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// ensure starts (or resumes) a session like Sessions.Ensure, but ends at
// once with a DialogAtStartError when Claude stops at a dialog before its
// input box; a dialog after it (the auto-mode nudge) is a pending question.
func (s *Server) ensure(ctx context.Context, t session.Target) error {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var starting atomic.Bool
	starting.Store(true)
	attach := "tmux attach -t " + TmuxSession
	if s.opt.Config != nil && s.opt.Config.Tmux.Socket != "" {
		attach = "tmux -L " + s.opt.Config.Tmux.Socket + " attach -t " + TmuxSession
	}
	began := time.Now()
	t.OnDialog = func(d session.Dialog) {
		if !starting.Load() {
			return
		}
		if s.sessionStarted(t.Key, began) {
			// Claude is up (its SessionStart ran) and asks something before
			// its input box, as the auto-mode nudge does when the machine
			// is slow: a pending question of the session, as after it.
			cancel(errDialogInSession)
			return
		}
		cancel(&DialogAtStartError{Dialog: d, Attach: attach})
	}
	_, _, err := s.opt.Sessions.Ensure(sctx, t)
	starting.Store(false)
	if de := (*DialogAtStartError)(nil); errors.As(context.Cause(sctx), &de) {
		return de
	}
	if errors.Is(context.Cause(sctx), errDialogInSession) {
		return nil
	}
	return err
}

// errDialogInSession ends a start whose Claude is up with a dialog shown.
var errDialogInSession = errors.New("Claude started and shows a dialog")

// sessionStarted reports whether the session's SessionStart hook ran since
// since: Claude has a session, and a dialog now is one of it.
func (s *Server) sessionStarted(key string, since time.Time) bool {
	rec, err := s.opt.Store.Sessions.Get(key)
	return err == nil && rec.ClaudeSessionID != "" && rec.StartSource != "" && !rec.LastEventAt.Before(since)
}

// ours reports whether this server started (or resumed) the session.
func (s *Server) ours(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[key]
}
