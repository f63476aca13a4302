package daemon

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

func newAttention(t *testing.T, f *drainFixture, owner string, after time.Duration, now *time.Time) *attention {
	t.Helper()
	ext, err := state.OpenExtras(f.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := discord.NewPoster(f.srv.URL, f.bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	d := config.Duration{Duration: after}
	cfg := &config.Config{Servers: []config.Server{{Name: "home", OwnerIDs: []string{owner},
		Projects: []config.Project{{Name: "api", ChannelID: f.bot.ChannelID, Attention: config.Attention{AttentionAfter: &d}}}}}}
	f.store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID = "home", "api", f.bot.ChannelID
		return nil
	})
	return &attention{store: f.store, ext: ext, cfg: cfg, posters: map[string]chat.Poster{"home": p}, log: slog.New(slog.DiscardHandler), now: func() time.Time { return *now }}
}

func (f *drainFixture) pings(t *testing.T, owner string) []string {
	t.Helper()
	var out []string
	for _, m := range f.srv.Messages(f.bot.ChannelID) {
		got := f.srv.Mentioned(m.ID)
		if len(got) == 0 {
			continue
		}
		if !slices.Equal(got, []string{owner}) {
			t.Errorf("%q mentions %v, want only %s", m.Content, got, owner)
		}
		out = append(out, m.Content)
	}
	return out
}

func TestUnansweredCardMentionsTheOwnerOnce(t *testing.T) {
	f := newDrainFixture(t)
	owner := f.srv.NewUser("owner").ID
	now := time.Now()
	a := newAttention(t, f, owner, time.Minute, &now)
	ctx := context.Background()
	created := now
	f.store.Requests.Create(ctx, "req1", state.Request{Session: "home-api", Server: "home", ChannelID: f.bot.ChannelID, Status: state.RequestPending, Created: created})
	a.once(ctx)
	if got := f.pings(t, owner); len(got) != 0 {
		t.Fatalf("pinged before attention_after: %q", got)
	}
	now = created.Add(61 * time.Second)
	a.once(ctx)
	a.once(ctx)
	got := f.pings(t, owner)
	if len(got) != 1 || !strings.HasPrefix(got[0], "<@"+owner+"> Claude has been waiting 1m1s for your answer") {
		t.Fatalf("pings %q, want one", got)
	}
	// An answered card never pings.
	f.store.Requests.Create(ctx, "req2", state.Request{Session: "home-api", Server: "home", ChannelID: f.bot.ChannelID, Status: state.RequestDecided, Created: created})
	now = created.Add(time.Hour)
	a.once(ctx)
	if got := f.pings(t, owner); len(got) != 1 {
		t.Fatalf("pings %q", got)
	}
}

func TestDialogWithoutCardMentionsTheOwnerFromTheNotification(t *testing.T) {
	f := newDrainFixture(t)
	owner := f.srv.NewUser("owner").ID
	now := time.Now()
	a := newAttention(t, f, owner, time.Minute, &now)
	ctx := context.Background()
	notified := now
	f.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.LastEvent, s.LastEventAt = "Notification", notified; return nil })
	a.ext.Waiting.Update(ctx, "home-api", func(w *state.Waiting) error {
		*w = state.Waiting{Kind: "permission_prompt", Message: "Claude needs your permission", ClaudeSessionID: "sid", PromptID: "p1", At: notified}
		return nil
	})
	now = notified.Add(50 * time.Second) // the dialog opened 6 s before the notification: 56 s
	a.once(ctx)
	if got := f.pings(t, owner); len(got) != 0 {
		t.Fatalf("pinged early: %q", got)
	}
	now = notified.Add(55 * time.Second)
	a.once(ctx)
	a.once(ctx)
	if got := f.pings(t, owner); len(got) != 1 || !strings.Contains(got[0], "waiting for you in the terminal: Claude needs your permission.") {
		t.Fatalf("pings %q", got)
	}
}

func TestAnsweredDialogDoesNotPing(t *testing.T) {
	f := newDrainFixture(t)
	owner := f.srv.NewUser("owner").ID
	now := time.Now()
	a := newAttention(t, f, owner, time.Minute, &now)
	ctx := context.Background()
	notified := now
	a.ext.Waiting.Update(ctx, "home-api", func(w *state.Waiting) error {
		*w = state.Waiting{Kind: "permission_prompt", ClaudeSessionID: "sid", PromptID: "p1", At: notified}
		return nil
	})
	f.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error {
		s.LastEvent, s.LastEventAt = "PostToolUse", notified.Add(5*time.Second)
		return nil
	})
	now = notified.Add(time.Hour)
	a.once(ctx)
	if got := f.pings(t, owner); len(got) != 0 {
		t.Fatalf("pinged for an answered dialog: %q", got)
	}
}

// A card answered from Discord, in the moment before the next hook event
// records the answer, is not mistaken for a dialog without a card: the
// session still says Notification, but the notification was about the
// carded dialog.
func TestAnsweredCardIsNotADialogWithoutCard(t *testing.T) {
	f := newDrainFixture(t)
	owner := f.srv.NewUser("owner").ID
	now := time.Now()
	a := newAttention(t, f, owner, time.Minute, &now)
	ctx := context.Background()
	opened := now
	notified := opened.Add(notifyDelay)
	f.store.Requests.Create(ctx, "req1", state.Request{Session: "home-api", Server: "home", ChannelID: f.bot.ChannelID, Status: state.RequestDecided, Created: opened})
	f.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.LastEvent, s.LastEventAt = "Notification", notified; return nil })
	a.ext.Waiting.Update(ctx, "home-api", func(w *state.Waiting) error {
		*w = state.Waiting{Kind: "permission_prompt", Message: "Claude needs your permission", ClaudeSessionID: "sid", PromptID: "p1", At: notified}
		return nil
	})
	now = notified.Add(2 * time.Minute)
	a.once(ctx)
	if got := f.pings(t, owner); len(got) != 0 {
		t.Fatalf("pinged for a dialog whose card was answered: %q", got)
	}
}

// deliverStub types into nothing: dialogs deliveries find a dialog open;
// with noReceipt Claude never confirms, and Enter fails with enterErr.
type deliverStub struct {
	routerSessions
	got       []string
	dialogs   int
	noReceipt bool
	enterErr  error
	enters    int
}

func (d *deliverStub) Deliver(_ context.Context, key, text string) (time.Time, error) {
	d.got = append(d.got, key+":"+text)
	if d.dialogs > 0 {
		d.dialogs--
		return time.Time{}, session.ErrDialogOpen
	}
	return time.Now(), nil
}

func (d *deliverStub) Screen(context.Context, string, int) (string, error) { return "", nil }

func (d *deliverStub) WaitReceipt(context.Context, string, time.Time, string, time.Duration) error {
	if d.noReceipt {
		return session.ErrNoReceipt
	}
	return nil
}

func (d *deliverStub) PressEnter(context.Context, string) error {
	d.enters++
	return d.enterErr
}

func TestDeliveredPromptsAreRecordedBeforeTyping(t *testing.T) {
	f := newDrainFixture(t)
	ext, _ := state.OpenExtras(f.store.Dir)
	stub := &deliverStub{}
	s := recordingSessions{stub, ext, slog.New(slog.DiscardHandler)}
	s.Deliver(context.Background(), "home-api", "hello\tthere")
	s.Deliver(context.Background(), "home-api", "/clear")
	d, err := ext.Delivered.Get("home-api")
	if err != nil || len(d.Prompts) != 1 || !d.Take("hello    there", time.Now(), time.Minute) {
		t.Fatalf("delivered = %+v, %v", d, err)
	}
	if len(stub.got) != 2 {
		t.Errorf("inner Deliver calls %v", stub.got)
	}
}

func TestPrefsWrittenPerProjectAndThread(t *testing.T) {
	f := newDrainFixture(t)
	ext, _ := state.OpenExtras(f.store.Dir)
	off, no := "off", false
	cfg := &config.Config{Servers: []config.Server{{Name: "home", OwnerIDs: []string{"1"}, Projects: []config.Project{{Name: "api",
		Attention: config.Attention{Footer: off},
		Thread:    config.ThreadDefaults{Attention: config.Attention{MirrorTerminal: &no}},
		Threads:   []config.Thread{{ThreadID: "9", Attention: config.Attention{Footer: "on"}}}}}}}}
	if err := writePrefs(context.Background(), ext, cfg); err != nil {
		t.Fatal(err)
	}
	p, err := ext.Prefs.Get(state.PrefsKey("home", "api"))
	if err != nil {
		t.Fatal(err)
	}
	if p.For("").Footer || !p.For("").MirrorTerminal || p.For("5").MirrorTerminal || p.For("5").Footer || !p.For("9").Footer || p.For("9").MirrorTerminal ||
		p.For("").AttentionAfter != time.Minute || !slices.Equal(p.Owners, []string{"1"}) {
		t.Errorf("prefs %+v", p)
	}
}

// routerSessions is router.Sessions, for stubs that implement a part of it.
type routerSessions = router.Sessions

func TestContinueIsSentOnceAfterTheResetWhenArmed(t *testing.T) {
	f := newDrainFixture(t)
	owner := f.srv.NewUser("owner").ID
	now := time.Now()
	a := newAttention(t, f, owner, time.Minute, &now)
	stub := &deliverStub{}
	a.sessions = stub
	ctx := context.Background()
	reset := now.Add(time.Hour)
	a.ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error {
		*x = state.Resume{Server: "home", ChannelID: f.bot.ChannelID, At: reset}
		return nil
	})
	now = reset.Add(time.Minute)
	a.once(ctx) // not armed: nothing
	if len(stub.got) != 0 {
		t.Fatalf("sent %v without a click", stub.got)
	}
	a.ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error { x.Armed, x.At = true, reset; return nil })
	now = reset.Add(-time.Second)
	a.once(ctx) // armed, not yet
	if len(stub.got) != 0 {
		t.Fatalf("sent %v before the reset", stub.got)
	}
	now = reset
	a.once(ctx)
	a.once(ctx)
	a.sends.Wait()
	if len(stub.got) != 1 || stub.got[0] != "home-api:continue" {
		t.Fatalf("sent %v, want continue once", stub.got)
	}
	if got := f.contents(); len(got) != 1 || !strings.Contains(got[0], "sent \"continue\"") {
		t.Errorf("channel %q", got)
	}
}

func TestContinueIsNotSentWhenTheSessionWentOn(t *testing.T) {
	f := newDrainFixture(t)
	now := time.Now()
	a := newAttention(t, f, f.srv.NewUser("owner").ID, time.Minute, &now)
	stub := &deliverStub{}
	a.sessions = stub
	ctx := context.Background()
	a.ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error {
		*x = state.Resume{Server: "home", ChannelID: f.bot.ChannelID, PromptID: "p-failed", At: now, Armed: true}
		return nil
	})
	// Claude Code continued by itself at the reset (a plan's auto-continue).
	f.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.LastPromptID = "p-auto"; return nil })
	a.once(ctx)
	a.sends.Wait()
	if len(stub.got) != 0 {
		t.Fatalf("sent %v although the session went on", stub.got)
	}
	if got := f.contents(); len(got) != 1 || !strings.Contains(got[0], "gone on already") {
		t.Errorf("channel %q", got)
	}
}

// "continue" at the reset waits while a dialog is open, presses Enter again
// when Claude does not confirm it, and says so in full when it fails.
func TestContinueAtResetWaitsOutADialogAndWantsAReceipt(t *testing.T) {
	f := newDrainFixture(t)
	now := time.Now()
	a := newAttention(t, f, f.srv.NewUser("owner").ID, time.Minute, &now)
	a.cfg.Claude.PromptTimeout.Duration = 10 * time.Second
	long := strings.Repeat("tmux: pane busy. ", 150) // about 2,500 characters
	stub := &deliverStub{dialogs: 1, noReceipt: true, enterErr: errors.New(long)}
	a.sessions = stub
	ctx := context.Background()
	a.ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error {
		*x = state.Resume{Server: "home", ChannelID: f.bot.ChannelID, At: now, Armed: true}
		return nil
	})
	a.once(ctx)
	a.sends.Wait()
	if len(stub.got) != 2 || stub.enters != 1 {
		t.Fatalf("typed %v, pressed Enter %d times; want the dialog waited out and Enter pressed again", stub.got, stub.enters)
	}
	got := strings.Join(f.contents(), "")
	if !strings.Contains(got, "could not send") || !strings.Contains(got, "no delivery receipt") || strings.Count(got, "pane busy") != 150 {
		t.Errorf("channel %q, want the whole failure", f.contents())
	}
}

// The hooks' defaults, used before the daemon writes any prefs, are the
// config's.
func TestHookDefaultsAreTheConfigs(t *testing.T) {
	if got := sessionPrefs(config.Attention{}.Resolve()); got != state.DefaultSessionPrefs {
		t.Fatalf("config defaults %+v, hook defaults %+v", got, state.DefaultSessionPrefs)
	}
}
