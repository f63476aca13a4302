package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Typist is what Send drives: a Manager, or a front end's wrapper of one
// (the daemon records each prompt it delivers).
type Typist interface {
	Deliver(ctx context.Context, key, text string) (time.Time, error)
	WaitReceipt(ctx context.Context, key string, since time.Time, text string, timeout time.Duration) error
	PressEnter(ctx context.Context, key string) error
	Screen(ctx context.Context, key string, lines int) (string, error)
}

// SendOptions tune Send.
type SendOptions struct {
	// DialogWait bounds the wait while a dialog holds the message back.
	DialogWait time.Duration
	// OnDialog, if set, is called once, when a dialog first holds the
	// message back, so the sender can say it will wait.
	OnDialog func()
	// OnQueue, if set, is called once, when messages waiting in Claude
	// Code's own queue hold this one back (until the turn ends).
	OnQueue func()
}

// ErrDialogStayedOpen is returned when a dialog held a message back for
// all of SendOptions.DialogWait.
var ErrDialogStayedOpen = errors.New("a dialog stayed open in Claude's terminal")

// Timings of Send.
const (
	dialogRetry   = time.Second
	queuePoll     = 100 * time.Millisecond // while Claude Code's queue drains
	inputSettle   = 3 * time.Second        // at most, for text left in the input box
	secondReceipt = 8 * time.Second
	sendScreen    = 40 // lines read to see the queue and the input box
)

// Send delivers text as its user typed it, the one way both front ends
// (Discord and MCP) do: after Claude Code's own queue has drained, never
// into a dialog (it waits while one is open), and with Claude's receipt,
// pressing Enter once more if none came. Claude's built-in commands
// (/clear, /compact) fire no UserPromptSubmit, so no receipt is awaited
// for them. It returns ErrNoReceipt when Claude never confirmed the text.
func Send(ctx context.Context, s Typist, key, text string, opt SendOptions) error {
	ctx, release := hold(ctx)
	defer release()
	if err := waitQueueDrained(ctx, s, key, opt.OnQueue); err != nil {
		return err
	}
	since, err := deliverWhenNoDialog(ctx, s, key, text, opt)
	if err != nil {
		return err
	}
	if strings.HasPrefix(strings.TrimSpace(text), "/") {
		return nil
	}
	if err := s.WaitReceipt(ctx, key, since, text, 0); err == nil {
		return nil
	}
	if err := s.PressEnter(ctx, key); err != nil {
		return fmt.Errorf("%w (and Enter could not be pressed again: %w)", ErrNoReceipt, err)
	}
	return s.WaitReceipt(ctx, key, since, text, secondReceipt)
}

// waitQueueDrained waits while earlier messages wait in Claude Code's own
// queue: a message typed then, just as a turn ends, would reach Claude
// before them (seen with 2.1.328: queued B, then C typed at the turn's end,
// ran as C, B). It also waits, for a few seconds at most, while the input
// box still holds text: the receipt of the previous message comes from its
// UserPromptSubmit hook, and Claude Code queues or runs that message only
// after the hook returns, with the text left in the box meanwhile. The
// queue drains by itself when the turn ends; an error reading the screen
// is left for the delivery to report.
//
// While a turn runs, the drained screen is trusted only when read so
// twice in a row: a frame caught mid-draw (the previous message just gone
// from the box, its queue line not drawn yet) reads as drained, and two
// messages in the queue reach Claude as one prompt.
func waitQueueDrained(ctx context.Context, s Typist, key string, onQueue func()) error {
	inputDeadline := time.Now().Add(inputSettle)
	drainedBefore := false
	for {
		screen, err := s.Screen(ctx, key, sendScreen)
		if err != nil {
			return nil
		}
		queued := Queued(screen)
		drained := !queued && (InputText(screen) == "" || time.Now().After(inputDeadline))
		if drained && (drainedBefore || !Busy(screen)) {
			return nil
		}
		drainedBefore = drained
		if queued && onQueue != nil {
			onQueue()
			onQueue = nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(queuePoll):
		}
	}
}

// deliverWhenNoDialog delivers, waiting while a dialog is open: typing into
// one would answer it.
func deliverWhenNoDialog(ctx context.Context, s Typist, key, text string, opt SendOptions) (time.Time, error) {
	deadline := time.Now().Add(opt.DialogWait)
	told := false
	for {
		since, err := s.Deliver(ctx, key, text)
		if !errors.Is(err, ErrDialogOpen) {
			return since, err
		}
		if !told && opt.OnDialog != nil {
			opt.OnDialog()
		}
		told = true
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%w for %s", ErrDialogStayedOpen, opt.DialogWait)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(dialogRetry):
		}
	}
}

// InputText returns the text in Claude Code's input box ("" when it is
// empty or not shown), Claude's "Press up to edit queued messages" hint
// left out.
func InputText(screen string) string {
	box, _, ok := inputBox(screen)
	if !ok {
		return ""
	}
	var words []string
	for _, l := range strings.Split(box, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "❯"))
		if l != "" && l != "Press up to edit queued messages" {
			words = append(words, l)
		}
	}
	return strings.Join(words, " ")
}
