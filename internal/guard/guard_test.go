package guard

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

func newGuard(t *testing.T) *Guard {
	t.Helper()
	d, err := state.Open(filepath.Join(t.TempDir(), "durable"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := state.OpenBindings(d)
	if err != nil {
		t.Fatal(err)
	}
	g := New(c)
	g.Wait = 0
	return g
}

var drawn = chat.Message{Content: "Merge `x`?", Rows: []chat.Row{{Buttons: []chat.Button{
	{Label: "Merge this", CustomID: "cb1|i|land|k|merge|abc", Style: chat.Primary},
	{Label: "Keep", CustomID: "cb1|i|land|k|keep", Style: chat.Secondary}}}}}

// TestGuardAcceptsOnlyTheBoundMessageAsDrawn: the message bound, showing
// what was drawn (Discord drops surrounding blanks), passes; a copy, an
// edit of its text, labels or attachments, another channel or server, an
// unbound message and one bound too long ago do not.
func TestGuardAcceptsOnlyTheBoundMessageAsDrawn(t *testing.T) {
	g := newGuard(t)
	ctx := context.Background()
	if err := g.Bind(ctx, "home", "c1", "m1", drawn, []string{"f1"}); err != nil {
		t.Fatal(err)
	}
	shown := Shown{ID: "m1", Content: drawn.Content + "\n", Rows: drawn.Rows, FileIDs: []string{"f1"}}
	if err := g.Check(ctx, "home", "c1", shown); err != nil {
		t.Fatalf("the message as drawn: %v", err)
	}
	swapped := []chat.Row{{Buttons: []chat.Button{drawn.Rows[0].Buttons[0], drawn.Rows[0].Buttons[1]}}}
	swapped[0].Buttons[0].Label, swapped[0].Buttons[1].Label = "Keep", "Merge this"
	for name, c := range map[string]struct {
		server, channel string
		s               Shown
	}{
		"a copy":             {"home", "c1", Shown{ID: "m2", Content: drawn.Content, Rows: drawn.Rows, FileIDs: []string{"f1"}}},
		"edited text":        {"home", "c1", Shown{ID: "m1", Content: "✅ Tests pass", Rows: drawn.Rows, FileIDs: []string{"f1"}}},
		"labels swapped":     {"home", "c1", Shown{ID: "m1", Content: drawn.Content, Rows: swapped, FileIDs: []string{"f1"}}},
		"attachment removed": {"home", "c1", Shown{ID: "m1", Content: drawn.Content, Rows: drawn.Rows}},
		"another channel":    {"home", "c2", shown},
		"another server":     {"work", "c1", shown},
		"no id":              {"home", "c1", Shown{Content: drawn.Content, Rows: drawn.Rows, FileIDs: []string{"f1"}}},
	} {
		if err := g.Check(ctx, c.server, c.channel, c.s); err != ErrChanged {
			t.Errorf("%s: %v", name, err)
		}
	}
	g.now = func() time.Time { return time.Now().Add(MaxAge + time.Hour) }
	if err := g.Check(ctx, "home", "c1", shown); err != ErrChanged {
		t.Errorf("a binding older than MaxAge: %v", err)
	}
}

// TestGuardRebindAndUnbind: a redraw replaces the face; a message redrawn
// without controls is unbound; a guard without a store refuses.
func TestGuardRebindAndUnbind(t *testing.T) {
	g := newGuard(t)
	ctx := context.Background()
	_ = g.Bind(ctx, "home", "c1", "m1", drawn, nil)
	redrawn := chat.Message{Content: "Merged.", Rows: drawn.Rows[:1]}
	redrawn.Rows = []chat.Row{{Buttons: drawn.Rows[0].Buttons[1:]}}
	if err := g.Bind(ctx, "home", "c1", "m1", redrawn, nil); err != nil {
		t.Fatal(err)
	}
	if err := g.Check(ctx, "home", "c1", Shown{ID: "m1", Content: drawn.Content, Rows: drawn.Rows}); err != ErrChanged {
		t.Errorf("the old drawing after a redraw: %v", err)
	}
	if err := g.Check(ctx, "home", "c1", Shown{ID: "m1", Content: redrawn.Content, Rows: redrawn.Rows}); err != nil {
		t.Errorf("the redrawing: %v", err)
	}
	if err := g.Bind(ctx, "home", "c1", "m1", chat.Message{Content: "Done."}, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Shown{{ID: "m1", Content: "Done."}, {ID: "m1", Content: redrawn.Content, Rows: redrawn.Rows}} {
		if err := g.Check(ctx, "home", "c1", s); err != ErrSpent {
			t.Errorf("a message redrawn without controls, clicked as %q: %v", s.Content, err)
		}
	}
	if err := New(nil).Check(ctx, "home", "c1", Shown{ID: "m1", Content: redrawn.Content, Rows: redrawn.Rows}); err != ErrChanged {
		t.Errorf("no store: %v", err)
	}
}

// TestGuardWaitsForABindingOnItsWay: a click quicker than the record of
// the message it is on is judged once the record is there.
func TestGuardWaitsForABindingOnItsWay(t *testing.T) {
	g := newGuard(t)
	g.Wait = RecordWait
	ctx := context.Background()
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = g.Bind(ctx, "home", "c1", "m1", drawn, nil)
	}()
	if err := g.Check(ctx, "home", "c1", Shown{ID: "m1", Content: drawn.Content, Rows: drawn.Rows}); err != nil {
		t.Fatalf("a click before its record: %v", err)
	}
}

func TestPolicies(t *testing.T) {
	if Policy(0).Valid() || !Bound.Valid() || !Inert.Valid() || Policy(3).Valid() {
		t.Fatal("only Bound and Inert are policies")
	}
}
