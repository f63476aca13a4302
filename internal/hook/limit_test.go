package hook

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

func TestParseReset(t *testing.T) {
	utc := time.Date(2026, 11, 23, 13, 20, 5, 0, time.UTC)
	paris, _ := time.LoadLocation("Europe/Paris")
	for msg, want := range map[string]time.Time{
		"API Error: Request rejected (429) · You've hit your 5-hour limit · resets 1:33pm (UTC)": time.Date(2026, 11, 23, 13, 33, 0, 0, time.UTC),
		"You've hit your session limit · resets 3pm (Europe/Paris)":                              time.Date(2026, 11, 23, 15, 0, 0, 0, paris),
		"You've hit your 5-hour limit · resets 1am (UTC)":                                        time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC),
		"You've hit your weekly limit · resets Nov 26, 9am (UTC)":                                time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC),
	} {
		got, ok := parseReset(msg, utc)
		if !ok || !got.Equal(want) {
			t.Errorf("parseReset(%q) = %v %v, want %v", msg, got, ok, want)
		}
	}
	if _, ok := parseReset("API Error: Request rejected (429) · Usage limit reached", utc); ok {
		t.Error("a message with no reset time parsed")
	}
	// The plan limits of the statusLine win over the text.
	at := utc.Add(3 * time.Hour)
	st := &state.Status{FiveHour: &state.Limit{UsedPct: 100, ResetsAt: at}, SevenDay: &state.Limit{UsedPct: 40, ResetsAt: utc.Add(72 * time.Hour)}}
	if got, ok := limitReset(st, "resets 1:33pm (UTC)", utc); !ok || !got.Equal(at) {
		t.Errorf("limitReset = %v %v, want %v", got, ok, at)
	}
}

func TestUsageLimitOffersContinueAtReset(t *testing.T) {
	r := newRelay(t)
	ctx := context.Background()
	r.store.Bots.Update(ctx, "home", func(b *state.Bot) error { b.Instance = "inst1"; return nil })
	reset := time.Now().Add(2*time.Hour + 10*time.Minute).Truncate(time.Minute)
	msg := "API Error: Request rejected (429) · You've hit your 5-hour limit · resets " + strings.ToLower(reset.UTC().Format("3:04PM")) + " (UTC)"
	r.event(t, fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","cwd":"/p","hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":%q}`, msg))
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 2 {
		t.Fatalf("messages %q", r.contents())
	}
	if !strings.Contains(msgs[0].Content, "The usage limit resets at "+reset.UTC().Format("15:04")+" UTC (in 2h10m)") {
		t.Errorf("failure message %q", msgs[0].Content)
	}
	ids := msgs[1].CustomIDs()
	if len(ids) != 1 {
		t.Fatalf("button message %q has ids %q", msgs[1].Content, ids)
	}
	id, err := chat.DecodeID(ids[0])
	if err != nil || id.Instance != "inst1" || id.Kind != state.ResumeKind || len(id.Args) != 1 || !chat.ArgIs(id.Args[0], "home-api") {
		t.Errorf("button id %+v, %v", id, err)
	}
	res, err := r.extras(t).Resumes.Get("home-api")
	if err != nil || !res.At.Equal(reset.UTC()) || res.Armed || res.ChannelID != r.bot.ChannelID || res.ClaudeSessionID != "sid" || res.PromptID != "p1" {
		t.Errorf("resume = %+v, %v", res, err)
	}
	// The button is bound to its message as posted (internal/guard).
	if res.MessageID != msgs[1].ID || res.Face == "" {
		t.Errorf("the offer is not bound to message %s: %+v", msgs[1].ID, res)
	}
	// An unknown reset: said so, and no button.
	r.event(t, `{"session_id":"sid","prompt_id":"p2","cwd":"/p","hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429) · Usage limit reached"}`)
	if got := r.contents(); len(got) != 3 || !strings.Contains(got[2], "reset time is not known") {
		t.Errorf("messages %q", got)
	}
}
