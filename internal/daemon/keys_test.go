package daemon

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// pressRecorder stands for the session manager's PressAnswer: it records
// the order of the presses and how many ran at once.
type pressRecorder struct {
	mu      sync.Mutex
	order   []string
	running int
	most    int
	err     error
}

func (p *pressRecorder) press(ctx context.Context, req state.Request, _ string) (string, error) {
	p.mu.Lock()
	p.running++
	p.most = max(p.most, p.running)
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(req.ToolInput, &in)
	p.order = append(p.order, in.Command)
	p.mu.Unlock()
	select { // as long as a dialog takes to show
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return "", p.err
}

func (p *pressRecorder) pressed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.order...)
}

func keyedRequest(t *testing.T, store *state.Store, id, status, command string, created time.Time) {
	t.Helper()
	d, _ := json.Marshal(map[string]string{"behavior": "allow"})
	req := state.Request{Session: "s1", Keys: "codex", Status: status, ToolName: "Bash", Created: created,
		ToolInput: json.RawMessage(`{"command":"` + command + `"}`)}
	if status == state.RequestDecided {
		req.Decision = d
	}
	if _, err := store.Requests.Create(context.Background(), id, req); err != nil {
		t.Fatal(err)
	}
}

func newPresser(t *testing.T) (*presser, *state.Store, *pressRecorder) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &pressRecorder{}
	return &presser{store: store, press: rec.press, log: slog.New(slog.NewTextHandler(io.Discard, nil))}, store, rec
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A session's decided cards are pressed one at a time, oldest first (the
// order Codex shows their dialogs in), never concurrently.
func TestPresserPressesASessionsCardsOldestFirst(t *testing.T) {
	p, store, rec := newPresser(t)
	now := time.Now()
	for i, c := range []string{"echo one", "echo two", "echo three", "echo four"} {
		keyedRequest(t, store, "r"+string(rune('d'-i)), state.RequestDecided, c, now.Add(time.Duration(i)*time.Second))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.run(ctx)
	waitFor(t, "four presses", func() bool { return len(rec.pressed()) == 4 })
	if got := strings.Join(rec.pressed(), ","); got != "echo one,echo two,echo three,echo four" {
		t.Errorf("pressed %s, want oldest first", got)
	}
	if rec.most != 1 {
		t.Errorf("%d presses ran at once into one session's pane", rec.most)
	}
}

// A decided card whose command a NEWER pending card of the session asks
// about again is not pressed: the dialog on the screen is the newer one's.
func TestPresserLeavesADialogToTheNewerCardOfTheSameCommand(t *testing.T) {
	p, store, rec := newPresser(t)
	now := time.Now()
	keyedRequest(t, store, "old", state.RequestDecided, "git push", now)
	keyedRequest(t, store, "new", state.RequestPending, "git push", now.Add(time.Second))
	keyedRequest(t, store, "other", state.RequestDecided, "echo other", now.Add(2*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.run(ctx)
	waitFor(t, "the other card pressed", func() bool { return len(rec.pressed()) == 1 })
	waitFor(t, "the old card's note", func() bool {
		r, _ := store.Requests.Get("old")
		return r.Pressed && strings.Contains(r.Outcome, "newer card")
	})
	if got := rec.pressed(); got[0] != "echo other" {
		t.Errorf("pressed %q, want only the other card", got)
	}
	if r, _ := store.Requests.Get("old"); r.Status != state.RequestDecided {
		t.Errorf("the old card is %s", r.Status)
	}
}

// A dialog the presser never saw (taller than the pane) keeps its card
// open, saying to answer in the terminal: Codex still waits on it.
func TestPresserKeepsTheCardOfAnUnseenDialog(t *testing.T) {
	p, store, rec := newPresser(t)
	rec.err = session.ErrDialogUnseen
	keyedRequest(t, store, "r1", state.RequestDecided, "echo hi", time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.run(ctx)
	waitFor(t, "the card's note", func() bool {
		r, _ := store.Requests.Get("r1")
		return strings.Contains(r.Outcome, "could not see Codex's dialog")
	})
	r, _ := store.Requests.Get("r1")
	if r.Status == state.RequestTerminal || !strings.Contains(r.Outcome, "answer it in the terminal or with /screen") {
		t.Errorf("status %s, outcome %q", r.Status, r.Outcome)
	}
}

// A press outlives the process's context (`ccbridge mcp` ends when its
// client goes): the decision claimed is pressed and its outcome recorded
// before the process may exit.
func TestPresserFinishesAPressAsTheProcessEnds(t *testing.T) {
	p, store, rec := newPresser(t)
	rec.err = session.ErrDialogUnseen
	keyedRequest(t, store, "r1", state.RequestDecided, "echo hi", time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { p.run(ctx); close(ran) }()
	waitFor(t, "the press", func() bool { return len(rec.pressed()) == 1 })
	cancel()
	<-ran
	p.wait()
	if r, _ := store.Requests.Get("r1"); !strings.Contains(r.Outcome, "could not see Codex's dialog") {
		t.Errorf("outcome %q: the press or its record was cut short", r.Outcome)
	}
}
