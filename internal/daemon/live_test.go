package daemon

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/state"
)

func TestLiveDrawerDebouncesPerChannelAndSummarises(t *testing.T) {
	f := newDrainFixture(t)
	p, _ := discord.NewPoster(f.srv.URL, f.bot.Token)
	l, err := newLiveDrawer(f.store.Dir, map[string]chat.Poster{"home": p}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	l.now = func() time.Time { return now }
	ctx := context.Background()
	start := now
	change := func(fn func(a *state.Activity)) {
		l.acts.Update(ctx, "sid.p1", func(a *state.Activity) error {
			if a.Started.IsZero() {
				a.Server, a.ChannelID, a.Started = "home", f.bot.ChannelID, start
			}
			fn(a)
			a.Version++
			return nil
		})
	}
	change(func(a *state.Activity) {
		a.Items = append(a.Items, state.ActivityItem{Text: "Looking."}, state.ActivityItem{ToolUseID: "t1", Tool: "🔧 Read `a`", State: state.ToolRunning, Start: start})
	})
	l.once(ctx)
	msgs := f.srv.Messages(f.bot.ChannelID)
	if len(msgs) != 1 || msgs[0].Content != "⚙️ **Working** · 0s\n💬 Looking.\n🔧 Read `a` · ⏳ running · 0s" {
		t.Fatalf("messages %+v", f.contents())
	}
	// A change within 1.5 s waits.
	change(func(a *state.Activity) { a.Tool("t1").State, a.Tool("t1").End = state.ToolDone, start.Add(time.Second) })
	now = start.Add(time.Second)
	l.once(ctx)
	if m, _ := f.srv.Message(msgs[0].ID); m.Edits != 0 {
		t.Fatalf("edited within the debounce: %q", m.Content)
	}
	now = start.Add(1600 * time.Millisecond)
	l.once(ctx)
	l.once(ctx) // nothing new: no second edit
	m, _ := f.srv.Message(msgs[0].ID)
	if m.Edits != 1 || !strings.Contains(m.Content, "🔧 Read `a` · ✅ done · 1s") {
		t.Fatalf("after the debounce: %d edits, %q", m.Edits, m.Content)
	}
	change(func(a *state.Activity) { a.Ended = start.Add(4 * time.Second) })
	now = start.Add(4 * time.Second)
	l.once(ctx)
	m, _ = f.srv.Message(msgs[0].ID)
	if m.Content != "-# ⚙️ 1 tool(s) run · 4s" || len(f.srv.Messages(f.bot.ChannelID)) != 1 {
		t.Fatalf("summary %q, messages %q", m.Content, f.contents())
	}
	// A new drawer (a restarted daemon) keeps to the same message.
	l2, _ := newLiveDrawer(f.store.Dir, map[string]chat.Poster{"home": p}, slog.New(slog.DiscardHandler))
	l2.now = l.now
	l2.once(ctx)
	if len(f.srv.Messages(f.bot.ChannelID)) != 1 {
		t.Fatalf("re-posted: %q", f.contents())
	}
}

// A thread deleted mid-turn (Discord answers 404 10003) is not drawn again
// at every pass, and the activity is still removed after a day.
func TestLiveDrawerLeavesAnUnknownChannel(t *testing.T) {
	f := newDrainFixture(t)
	p, _ := discord.NewPoster(f.srv.URL, f.bot.Token)
	l, err := newLiveDrawer(f.store.Dir, map[string]chat.Poster{"home": p}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	now := start
	l.now = func() time.Time { return now }
	ctx := context.Background()
	// One activity still to post, one whose message stands in the thread.
	for key, ch := range map[string]string{"sid.new": "999", "sid.old": "998"} {
		l.acts.Update(ctx, key, func(a *state.Activity) error {
			a.Server, a.ChannelID, a.Started, a.Version = "home", ch, start, 1
			if key == "sid.old" {
				a.MessageID = "12345"
			}
			a.Items = append(a.Items, state.ActivityItem{ToolUseID: "t1", Tool: "🔧 Read `a`", State: state.ToolRunning, Start: start})
			return nil
		})
	}
	for i := range 6 {
		now = start.Add(time.Duration(i) * 3 * time.Second)
		l.once(ctx)
	}
	calls := map[string]int{}
	for _, c := range f.srv.Calls() {
		if strings.Contains(c.Path, "/channels/99") {
			calls[c.Method]++
		}
	}
	if calls["POST"] != 1 || calls["PATCH"] != 1 {
		t.Fatalf("requests to the deleted thread: %v, want one post and one edit", calls)
	}
	now = start.Add(25 * time.Hour)
	l.once(ctx)
	if all, _ := l.acts.List(); len(all) != 0 {
		t.Fatalf("kept after a day: %+v", all)
	}
}
