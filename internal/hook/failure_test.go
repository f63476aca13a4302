package hook

import (
	"context"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/state"
)

// A turn that failed because Claude has no login says what to do on the
// machine (the phone cannot /login), and a failed turn carries no cost
// footer (first contact 2, finding 2).
func TestAuthFailureSaysWhatToDoAndHasNoFooter(t *testing.T) {
	r := newRelay(t)
	r.setPrefs(t, nil, on)
	r.extras(t).Statuses.Update(context.Background(), "sid", func(s *state.Status) error {
		*s = state.Status{Model: "Opus 5.5", PromptID: "p1", HasContext: true, ContextPct: 1, CostUSD: 0.01}
		return nil
	})
	r.event(t, `{"session_id":"sid","prompt_id":"p1","cwd":"/p","hook_event_name":"StopFailure","error":"authentication_failed","last_assistant_message":"Not logged in · Please run /login"}`)
	got := r.contents()
	if len(got) != 1 {
		t.Fatalf("posted %q", got)
	}
	for _, want := range []string{"Not logged in", "on the machine", "`claude`", "/login", "ANTHROPIC_API_KEY", "[claude].env"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("the failure lacks %q: %q", want, got[0])
		}
	}
	if strings.Contains(got[0], "-# ") || strings.Contains(got[0], "$0.01") {
		t.Errorf("a failed turn has a cost footer: %q", got[0])
	}
	// Any failed turn: no footer either.
	r.event(t, `{"session_id":"sid","prompt_id":"p2","cwd":"/p","hook_event_name":"StopFailure","error":"unknown","last_assistant_message":"API Error: 400 bad request"}`)
	if got := r.contents(); len(got) != 2 || strings.Contains(got[1], "-# ") || strings.Contains(got[1], "/login") {
		t.Errorf("posted %q", got)
	}
}

// Codex fires no hook on an API error; the daemon hands its rollout's
// error to this hook as a StopFailure (session.WatchTurnErrors). It posts
// as Claude's does, naming Codex, and the session is idle again.
func TestCodexFailurePostsNamingCodex(t *testing.T) {
	r := newRelay(t)
	ctx := context.Background()
	r.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Busy = true; return nil })
	runCodex(t, Stop, r.root, "home-api", `{"session_id":"th1","turn_id":"t2","cwd":"/p","hook_event_name":"StopFailure","error":"invalid_request_error","last_assistant_message":"fake bad request"}`)
	if got := r.contents(); len(got) != 1 || got[0] != "⚠️ Codex's turn failed: fake bad request (invalid_request_error)" {
		t.Fatalf("posted %q", got)
	}
	if s, _ := r.store.Sessions.Get("home-api"); s.Busy || s.LastEvent != "StopFailure" {
		t.Errorf("session after the failure %+v", s)
	}
}
