package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// typist plays Claude's side of Send: a queue shown so many times, a
// dialog open for so many deliveries, receipts from a given call on.
type typist struct {
	queued, dialogs, receiptFrom int
	receiptCalls                 int
	ops                          []string
}

func (f *typist) Deliver(_ context.Context, _, text string) (time.Time, error) {
	if f.dialogs > 0 {
		f.dialogs--
		f.ops = append(f.ops, "dialog")
		return time.Time{}, ErrDialogOpen
	}
	f.ops = append(f.ops, "deliver "+text)
	return time.Now(), nil
}

func (f *typist) WaitReceipt(context.Context, string, time.Time, string, time.Duration) error {
	f.receiptCalls++
	f.ops = append(f.ops, "receipt?")
	if f.receiptFrom > 0 && f.receiptCalls >= f.receiptFrom {
		return nil
	}
	return ErrNoReceipt
}

func (f *typist) PressEnter(context.Context, string) error {
	f.ops = append(f.ops, "enter")
	return nil
}

func (f *typist) Screen(context.Context, string, int) (string, error) {
	if f.queued > 0 {
		f.queued--
		f.ops = append(f.ops, "queued")
		return "❯ a\n  ⎿  Queued · ctrl+x ctrl+s to send now\n" + rule + "\n❯ Press up to edit queued messages\n" + rule, nil
	}
	return rule + "\n❯ \n" + rule, nil
}

var rule = strings.Repeat("─", 40)

func TestSend(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    typist
		text string
		want []string
		err  error
		told int
	}{
		{"receipt at once", typist{receiptFrom: 1}, "hi", []string{"deliver hi", "receipt?"}, nil, 0},
		{"after Claude's queue", typist{queued: 2, receiptFrom: 1}, "hi", []string{"queued", "queued", "deliver hi", "receipt?"}, nil, 0},
		{"after a dialog", typist{dialogs: 2, receiptFrom: 1}, "hi", []string{"dialog", "dialog", "deliver hi", "receipt?"}, nil, 1},
		{"Enter once more", typist{receiptFrom: 2}, "hi", []string{"deliver hi", "receipt?", "enter", "receipt?"}, nil, 0},
		{"never confirmed", typist{}, "hi", []string{"deliver hi", "receipt?", "enter", "receipt?"}, ErrNoReceipt, 0},
		{"a built-in command has no receipt", typist{}, "/clear", []string{"deliver /clear"}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			told := 0
			err := Send(context.Background(), &tc.f, "k", tc.text, SendOptions{DialogWait: time.Minute, OnDialog: func() { told++ }})
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if !slices.Equal(tc.f.ops, tc.want) || told != tc.told {
				t.Fatalf("ops = %q, told %d times; want %q, %d", tc.f.ops, told, tc.want, tc.told)
			}
		})
	}
}

// A message held behind Claude Code's own queue says so once, and goes in
// when the queue has drained.
func TestSendSaysOnceThatTheQueueHoldsIt(t *testing.T) {
	f := &typist{queued: 3, receiptFrom: 1}
	held := 0
	if err := Send(context.Background(), f, "k", "hi", SendOptions{DialogWait: time.Minute, OnQueue: func() { held++ }}); err != nil {
		t.Fatal(err)
	}
	if held != 1 || !slices.Equal(f.ops, []string{"queued", "queued", "queued", "deliver hi", "receipt?"}) {
		t.Fatalf("told %d times; ops %q", held, f.ops)
	}
}

func TestSendGivesUpOnADialogThatStaysOpen(t *testing.T) {
	f := &typist{dialogs: 100}
	err := Send(context.Background(), f, "k", "hi", SendOptions{DialogWait: time.Millisecond})
	if !errors.Is(err, ErrDialogStayedOpen) || slices.Contains(f.ops, "deliver hi") {
		t.Fatalf("err = %v, ops = %q", err, f.ops)
	}
}

func TestSendWaitsForTextLeftInTheInputBox(t *testing.T) {
	f := &typistWithText{typist: typist{receiptFrom: 1}, shows: 3}
	if err := Send(context.Background(), f, "k", "next", SendOptions{DialogWait: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if f.shows != 0 || f.ops[0] != "deliver next" {
		t.Fatalf("delivered while the box held text: %d left, ops %q", f.shows, f.ops)
	}
}

type typistWithText struct {
	typist
	shows int
}

func (f *typistWithText) Screen(ctx context.Context, key string, n int) (string, error) {
	if f.shows > 0 {
		f.shows--
		return rule + "\n❯ previous message\n" + rule, nil
	}
	return f.typist.Screen(ctx, key, n)
}
func TestInputText(t *testing.T) {
	rule := strings.Repeat("─", 40)
	for screen, want := range map[string]string{
		"● ok\n" + rule + "\n❯                 \n" + rule + "\n  ⏸ manual mode on":                           "",
		"❯ old\n" + rule + "\n❯ message r03-m02   \n" + rule + "\n  ⏸ manual mode on":                        "message r03-m02",
		"❯ a\n  ⎿  Queued · ctrl+x\n" + rule + "\n❯ Press up to edit queued messages\n" + rule + "\n footer": "",
		"no box at all": "",
	} {
		if got := InputText(screen); got != want {
			t.Errorf("InputText(%q) = %q, want %q", screen, got, want)
		}
	}
}

// While a turn runs, one read of an empty box and no queue is not trusted:
// a frame caught mid-draw (the previous message just left the box, its
// queue line not drawn yet) reads so. A second read a moment later shows
// the queue, and the message waits for it to drain: two messages in
// Claude Code's queue would reach Claude as one prompt.
func TestSendTrustsAnEmptyQueueOnlyTwiceWhileBusy(t *testing.T) {
	busy := "\n" + rule + "\n❯ \n" + rule + "\n  esc to interrupt"
	queued := "❯ a\n  ⎿  Queued · ctrl+x ctrl+s to send now\n" + rule + "\n❯ Press up to edit queued messages\n" + rule + "\n  esc to interrupt"
	f := &typistScreens{typist: typist{receiptFrom: 1}, screens: []string{busy, queued, queued, busy, busy}}
	if err := Send(context.Background(), f, "k", "next", SendOptions{DialogWait: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if f.read != 5 || f.ops[0] != "deliver next" {
		t.Fatalf("delivered after %d reads of the screen (want 5: the queue drained and read so twice); ops %q", f.read, f.ops)
	}
}

type typistScreens struct {
	typist
	screens []string
	read    int
}

func (f *typistScreens) Screen(ctx context.Context, key string, n int) (string, error) {
	if f.read < len(f.screens) {
		f.read++
		return f.screens[f.read-1], nil
	}
	return f.typist.Screen(ctx, key, n)
}
