package router

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/state"
)

func TestUsageShowsEverySessionOfTheProject(t *testing.T) {
	r, _, _, l, store := newRouter(t)
	ctx := context.Background()
	ext, _ := state.OpenExtras(store.Dir)
	store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Server, s.Project, s.ClaudeSessionID = "home", "api", "c1"; return nil })
	store.Sessions.Update(ctx, "home-api-t9", func(s *state.Session) error {
		s.Server, s.Project, s.ThreadID, s.ClaudeSessionID = "home", "api", "100000000000000050", "c2"
		return nil
	})
	store.Sessions.Update(ctx, "work-x", func(s *state.Session) error { s.Server, s.Project, s.ClaudeSessionID = "work", "x", "c3"; return nil })
	ext.Statuses.Update(ctx, "c1", func(s *state.Status) error {
		*s = state.Status{Model: "Opus 5.5", HasContext: true, ContextPct: 42, CostUSD: 0.25, LinesAdded: 5, LinesRemoved: 1,
			FiveHour: &state.Limit{UsedPct: 45, ResetsAt: time.Now().Add(150 * time.Minute)}, SevenDay: &state.Limit{UsedPct: 12}, At: time.Now()}
		return nil
	})
	ext.Statuses.Update(ctx, "c3", func(s *state.Status) error { *s = state.Status{Model: "OTHER PROJECT"}; return nil })
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "usage"}, fakeResponder{l: l})
	got := l.all()
	text := got[len(got)-1]
	for _, want := range []string{"**Usage — api**", "• channel session: Opus 5.5 · ctx 42% · $0.25 · 5h 45% (resets 2h30m) · 7d 12% · +5 −1 lines",
		"• thread <#100000000000000050>: no figures yet"} {
		if !strings.Contains(text, want) {
			t.Errorf("/usage = %q; missing %q", text, want)
		}
	}
	if strings.Contains(text, "OTHER PROJECT") {
		t.Errorf("/usage shows another project: %q", text)
	}
	if strings.Index(text, "channel session") > strings.Index(text, "thread <#") {
		t.Errorf("the channel's session is not first: %q", text)
	}
}

func TestContinueAtResetButtonArmsTheOffer(t *testing.T) {
	r, _, _, l, store := newRouter(t)
	ctx := context.Background()
	ext, _ := state.OpenExtras(store.Dir)
	at := time.Now().Add(30 * time.Minute)
	ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error {
		*x = state.Resume{Server: "home", ChannelID: channel, ClaudeSessionID: "c1", At: at}
		return nil
	})
	id, _ := chat.ID{Instance: "inst1", Kind: state.ResumeKind, Args: []string{"home-api"}}.Encode()
	// The offer as the hook posts and records it.
	offer := chat.Message{Content: "⏳ Send \"continue\" to Claude when the limit resets?", Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Continue at reset", CustomID: id}}}}}
	msgID := l.draw("", offer, nil)
	ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error { x.MessageID, x.Face = msgID, guard.Face(offer, nil); return nil })
	click := func(ch, user string) {
		ev := l.on(ch, msgID, id)
		ev.User = chat.User{ID: user}
		r.HandleComponent(ev, fakeResponder{l: l, at: msgID})
	}
	// A stranger's click changes nothing.
	click(channel, "100000000000000077")
	if res, _ := ext.Resumes.Get("home-api"); res.Armed {
		t.Fatal("a stranger armed the offer")
	}
	// Nor does a copy of the button elsewhere, or the offer edited.
	copied := l.draw("", offer, nil)
	ev := l.on(channel, copied, id)
	r.HandleComponent(ev, fakeResponder{l: l, at: copied})
	ev = l.on(channel, msgID, id)
	ev.Content = "⏳ Tap to see the limits"
	r.HandleComponent(ev, fakeResponder{l: l, at: msgID})
	if res, _ := ext.Resumes.Get("home-api"); res.Armed {
		t.Fatal("a copy or an edited offer armed it")
	}
	click(channel, owner)
	res, err := ext.Resumes.Get("home-api")
	if err != nil || !res.Armed || res.ArmedBy != owner {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	got := l.all()
	if !strings.HasPrefix(got[len(got)-1], "update ⏰ ccbridge will send \"continue\" to Claude at") || !strings.Contains(got[len(got)-1], "rows=0") {
		t.Errorf("ops %q", got)
	}
	// From another channel, the same button does nothing.
	click("100000000000000099", owner)
	if got := l.all(); !strings.Contains(got[len(got)-1], "no longer open") {
		t.Errorf("ops %q", got)
	}
	// A click quicker than the hook's record of the offer's message is
	// judged once the record is there.
	ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error {
		*x = state.Resume{Server: "home", ChannelID: channel, ClaudeSessionID: "c1", At: at}
		return nil
	})
	msgID = l.draw("", offer, nil)
	go func() {
		time.Sleep(100 * time.Millisecond)
		ext.Resumes.Update(ctx, "home-api", func(x *state.Resume) error { x.MessageID, x.Face = msgID, guard.Face(offer, nil); return nil })
	}()
	click(channel, owner)
	if res, _ := ext.Resumes.Get("home-api"); !res.Armed {
		t.Errorf("a click before the offer's record: %q", l.all()[len(l.all())-1])
	}
}
