package hook

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

func (r *rig) extras(t *testing.T) *state.Extras {
	t.Helper()
	e, err := state.OpenExtras(r.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (r *rig) setPrefs(t *testing.T, owners []string, p state.SessionPrefs) {
	t.Helper()
	if _, err := r.extras(t).Prefs.Update(context.Background(), state.PrefsKey("home", "api"), func(x *state.Prefs) error {
		x.Owners, x.Project, x.Thread = owners, p, p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error { s.Project = "api"; return nil })
}

func (r *rig) event(t *testing.T, payload string) {
	t.Helper()
	if out, _, code := run(t, Stop, r.root, "home-api", payload); code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
}

func (r *rig) queued() []string {
	all, _ := r.store.Outbox.List()
	var keys []string
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		out = append(out, all[k].Content)
	}
	return out
}

func promptPayload(pid, prompt string) string {
	return fmt.Sprintf(`{"session_id":"sid","prompt_id":%q,"cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":%q}`, pid, prompt)
}

var on = state.SessionPrefs{Footer: true, MirrorTerminal: true, AttentionAfter: time.Minute, AttentionTurn: 5 * time.Minute}

func TestTerminalPromptsAreMirroredOthersNot(t *testing.T) {
	r := newRelay(t)
	r.setPrefs(t, []string{"100000000000000002"}, on)
	// The daemon typed this one from Discord.
	r.extras(t).Delivered.Update(context.Background(), "home-api", func(d *state.Delivered) error {
		d.Add("from   discord\twith tabs", time.Now())
		return nil
	})
	r.event(t, promptPayload("p1", "from discord    with tabs"))
	r.event(t, promptPayload("p2", "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n</task-notification>"))
	r.event(t, promptPayload("p3", "<local-command-caveat>Caveat</local-command-caveat>\n<command-name>/model</command-name>"))
	r.event(t, promptPayload("p4", "typed here <@everyone>\nsecond line"))
	// The same text as a delivered one, typed again later: mirrored.
	r.event(t, promptPayload("p5", "from discord with tabs"))
	want := []string{"⌨️ **Typed at the terminal:**\n> typed here <@everyone>\n> second line", "⌨️ **Typed at the terminal:**\n> from discord with tabs"}
	if got := r.queued(); !slices.Equal(got, want) {
		t.Errorf("queued %q, want %q", got, want)
	}
	// mirror_terminal = false
	off := on
	off.MirrorTerminal = false
	r.setPrefs(t, nil, off)
	r.event(t, promptPayload("p6", "not mirrored"))
	if got := r.queued(); len(got) != 2 {
		t.Errorf("mirror_terminal = false still queued %q", got)
	}
}

func TestFreshSessionsAreAnnounced(t *testing.T) {
	r := newRelay(t)
	start := func(sid, source string) {
		r.event(t, fmt.Sprintf(`{"session_id":%q,"cwd":"/p","hook_event_name":"SessionStart","source":%q,"model":"claude-opus-5-5"}`, sid, source))
	}
	start("sid-a", "startup") // the first start: nothing
	start("sid-a", "compact")
	start("sid-b", "clear")
	start("sid-b", "clear") // repeated hook
	start("sid-c", "startup")
	start("sid-c", "resume")
	got := r.queued()
	want := []string{"🆕 Context cleared: new Claude session `sid-b`.",
		"🆕 Claude started a fresh session `sid-c` (the previous one, `sid-b`, is not continued).",
		"↩️ Resumed Claude session `sid-c`."}
	if !slices.Equal(got, want) {
		t.Errorf("queued %q, want %q", got, want)
	}
}

func TestLongTurnMentionsTheOwnersOnceShortTurnNever(t *testing.T) {
	r := newRelay(t)
	owner := r.srv.NewUser("owner")
	quiet := on
	quiet.MirrorTerminal = false
	r.setPrefs(t, []string{owner.ID}, quiet)
	ctx := context.Background()
	// A short turn.
	r.event(t, promptPayload("short", "quick"))
	r.stop(t, "short", "Quick answer.")
	// A long turn: its start is six minutes ago.
	r.event(t, promptPayload("long", "slow"))
	r.store.Seen.Update(ctx, turnStartKey("sid", "long"), func(s *state.Seen) error { s.At = time.Now().Add(-6 * time.Minute); return nil })
	r.stop(t, "long", "Slow answer.")
	r.stop(t, "long", "Slow answer.")
	var pings []string
	for _, m := range r.srv.Messages(r.bot.ChannelID) {
		if got := r.srv.Mentioned(m.ID); len(got) > 0 {
			if !slices.Equal(got, []string{owner.ID}) {
				t.Errorf("message %q mentions %v", m.Content, got)
			}
			pings = append(pings, m.Content)
		}
	}
	if len(pings) != 1 || !strings.HasPrefix(pings[0], "<@"+owner.ID+"> Claude is done (the turn ran 6m") {
		t.Errorf("pings %q, want one for the long turn", pings)
	}
	if got := r.contents(); len(got) != 3 || got[0] != "Quick answer." || got[1] != "Slow answer." {
		t.Errorf("channel %q", got)
	}
}

func TestNotificationsPostNothingAndMarkTheSessionWaiting(t *testing.T) {
	r := newRelay(t)
	r.event(t, `{"session_id":"sid","prompt_id":"p1","cwd":"/p","hook_event_name":"Notification","message":"Claude needs your permission","notification_type":"permission_prompt"}`)
	if got := r.contents(); len(got) != 0 {
		t.Errorf("posted %q", got)
	}
	if q := r.queued(); len(q) != 0 {
		t.Errorf("queued %q", q)
	}
	w, err := r.extras(t).Waiting.Get("home-api")
	if err != nil || w.Kind != "permission_prompt" || w.PromptID != "p1" {
		t.Errorf("waiting = %+v, %v", w, err)
	}
}

func TestReplyFooter(t *testing.T) {
	r := newRelay(t)
	ext := r.extras(t)
	ctx := context.Background()
	put := func(pid string, cost float64) {
		ext.Statuses.Update(ctx, "sid", func(s *state.Status) error {
			*s = state.Status{Model: "Opus 5.5", PromptID: pid, HasContext: true, ContextPct: 42, CostUSD: cost,
				FiveHour: &state.Limit{UsedPct: 45, ResetsAt: time.Now().Add(2*time.Hour + 30*time.Minute)}, SevenDay: &state.Limit{UsedPct: 12}}
			return nil
		})
	}
	put("p1", 0.25)
	r.stop(t, "p1", "Answer one.")
	if _, err := r.footerEdits(t).Get("sid"); err == nil {
		t.Error("a footer with the turn's own figures is due an edit")
	}
	// The turn's own statusLine has not come yet (it often lands after
	// Stop, and never when the next prompt went in at once): the reply
	// goes at once, with the figures known; it used to wait up to 2 s.
	start := time.Now()
	r.stop(t, "p2", "Answer two.")
	if took := time.Since(start); took > time.Second {
		t.Errorf("the Stop hook took %s: it waited for the statusLine", took)
	}
	got := r.contents()
	want := []string{"Answer one.\n-# Opus 5.5 · ctx 42% · $0.25 · 5h 45% (resets 2h30m) · 7d 12%",
		"Answer two.\n-# Opus 5.5 · ctx 42% · $0.25 · 5h 45% (resets 2h30m) · 7d 12%"}
	if !slices.Equal(got, want) {
		t.Errorf("posted %q, want %q", got, want)
	}
	if e, err := r.footerEdits(t).Get("sid"); err != nil || e.PromptID != "p2" || e.Content != want[1] {
		t.Errorf("footer edit = %+v, %v", e, err)
	}
	// footer = "off"
	off := on
	off.Footer = false
	r.setPrefs(t, nil, off)
	put("p3", 1)
	r.stop(t, "p3", "Answer three.")
	if got := r.contents(); got[len(got)-1] != "Answer three." {
		t.Errorf("footer off: %q", got[len(got)-1])
	}
}

func (r *rig) footerEdits(t *testing.T) *state.Collection[state.FooterEdit] {
	t.Helper()
	c, err := state.OpenFooterEdits(r.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// statusLine runs the statusLine command for Claude session "sid" at a
// prompt, with the fake API's usage of the e2e tier (42% of 1,000,000).
func (r *rig) statusLine(t *testing.T, prompt string, cost float64) {
	t.Helper()
	in := fmt.Sprintf(`{"session_id":"sid","prompt_id":%q,"cwd":"/p","model":{"id":"claude-opus-5-5","display_name":"Opus 5.5"},
 "workspace":{"current_dir":"/p","project_dir":""},"cost":{"total_cost_usd":%g},
 "context_window":{"context_window_size":1000000,"current_usage":{"input_tokens":20000,"cache_creation_input_tokens":100000,"cache_read_input_tokens":300000}}}`, prompt, cost)
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api", "HOME": t.TempDir()}
	var out, errb strings.Builder
	if code := Main(context.Background(), Stop, []string{StatusLineArg}, strings.NewReader(in), &out, &errb, func(k string) string { return env[k] }); code != 0 || errb.Len() > 0 {
		t.Fatalf("statusLine: exit %d, stderr %q", code, errb.String())
	}
}

// The turn's own figures, when the statusLine brings them after the reply
// was posted, are edited into its footer; figures of a later turn are not.
func TestFooterEditedInWhenTheTurnsFiguresCome(t *testing.T) {
	r := newRelay(t)
	r.statusLine(t, "p1", 0.25)
	r.stop(t, "p1", "Answer one.")
	r.stop(t, "p2", "Answer two.")
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 2 || msgs[1].Content != "Answer two.\n-# Opus 5.5 · ctx 42% · $0.25" {
		t.Fatalf("posted %q", r.contents())
	}
	r.statusLine(t, "p2", 0.5)
	if got := r.contents(); !slices.Equal(got, []string{"Answer one.\n-# Opus 5.5 · ctx 42% · $0.25", "Answer two.\n-# Opus 5.5 · ctx 42% · $0.50"}) {
		t.Errorf("after the turn's statusLine: %q", got)
	}
	// Later refreshes of the same turn keep it current; the next turn's
	// figures leave it alone and retire the record.
	r.statusLine(t, "p2", 0.75)
	r.statusLine(t, "p3", 1.5)
	if got := r.contents(); got[1] != "Answer two.\n-# Opus 5.5 · ctx 42% · $0.75" {
		t.Errorf("after later refreshes: %q", got)
	}
	if _, err := r.footerEdits(t).Get("sid"); err == nil {
		t.Error("the record outlived its turn")
	}
	if m := r.srv.Messages(r.bot.ChannelID)[1]; m.Edits != 2 {
		t.Errorf("%d edits, want 2", m.Edits)
	}
}

// The model and context of the footer come from the transcript's last
// assistant message, which is there when the reply is posted, not from an
// older statusLine record.
func TestFooterFiguresFromTheTranscript(t *testing.T) {
	r := newRelay(t)
	r.statusLine(t, "p1", 0.25) // Opus 5.5, 1,000,000 tokens
	usage := func(model string, tokens int) {
		line := fmt.Sprintf(`{"type":"assistant","message":{"id":"m-u","model":%q,"content":[{"type":"text","text":"x"}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3}}}`, model, tokens)
		f, _ := os.OpenFile(r.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		f.WriteString(line + "\n")
		f.Close()
	}
	usage("claude-opus-5-5", 555000)
	r.stop(t, "p2", "Answer two.")
	usage("claude-sonnet-5-5-20261001", 1000)
	r.stop(t, "p3", "Answer three.")
	want := []string{"Answer two.\n-# Opus 5.5 · ctx 56% · $0.25", "Answer three.\n-# Sonnet 5.5 · $0.25"}
	if got := r.contents(); !slices.Equal(got, want) {
		t.Errorf("posted %q, want %q", got, want)
	}
}
