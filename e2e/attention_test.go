//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// waitUntil polls cond until it holds or timeout passes.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRealClaudeRunsOurStatusLineAndTheUsersOwn: Claude Code 2.1.328 runs
// the statusLine ccbridge registers; it caches the figures the fake API's
// usage implies; the user's own statusLine keeps printing in the terminal,
// fed the same input.
func TestRealClaudeRunsOurStatusLineAndTheUsersOwn(t *testing.T) {
	t.Parallel()
	model := fakemodel.New(t)
	// 84,000 tokens in context on the last request.
	model.SetUsage(&fakemodel.Usage{InputTokens: 2000, CacheCreationInputTokens: 12000, CacheReadInputTokens: 70000, OutputTokens: 40})
	srv := tmuxtest.New(t)
	runtime := filepath.Join(t.TempDir(), "rt")
	project := t.TempDir()
	settings := claudehook.BridgeSettings(bins.hookStop, bins.hookPretool, time.Minute)
	c := claudetest.Start(t, claudetest.Options{Tmux: srv, Session: "sl", Dir: project, ModelURL: model.URL,
		Settings: settings.JSON(), Env: map[string]string{state.EnvRuntimeDir: runtime, state.EnvSession: "sl-1"}})

	// The user's own statusLine, in their settings (read on every call).
	dump := filepath.Join(t.TempDir(), "statusline-input.json")
	script := filepath.Join(t.TempDir(), "my-statusline.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat > '"+dump+"'\necho \"USER-STATUSLINE-OK\"\n"), 0o755)
	os.MkdirAll(filepath.Join(c.Home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(c.Home, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"`+script+`"}}`), 0o600)

	ctx := context.Background()
	if err := srv.PasteTextIf(ctx, c.Pane, tmux.Guard{}, "hello statusline"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SendKeys(ctx, c.Pane, tmux.KeyEnter); err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(runtime)
	if err != nil {
		t.Fatal(err)
	}
	turn := waitTurn(t, store, 60*time.Second)
	statuses, err := state.OpenStatuses(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var st state.Status
	waitUntil(t, 30*time.Second, "the statusLine of the turn", func() bool {
		st, err = statuses.Get(turn.ClaudeSessionID)
		return err == nil && st.PromptID == turn.PromptID && st.HasContext
	})
	// Our hook caches the figures first and runs the user's statusLine
	// after: the record can come before the user's command has written.
	var raw []byte
	waitUntil(t, 30*time.Second, "the user's statusLine", func() bool {
		raw, err = os.ReadFile(dump)
		return err == nil && len(raw) > 0 && json.Valid(raw)
	})
	t.Logf("statusLine input of 2.1.328: %s", raw)
	var in struct {
		SessionID string `json:"session_id"`
		Model     struct {
			DisplayName string `json:"display_name"`
		} `json:"model"`
		ContextWindow struct {
			Size int `json:"context_window_size"`
		} `json:"context_window"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || in.ContextWindow.Size == 0 {
		t.Fatalf("statusLine input %s: %v", raw, err)
	}
	want := 100 * 84000 / float64(in.ContextWindow.Size)
	if st.Model == "" || st.Model != in.Model.DisplayName || math.Abs(st.ContextPct-want) > 0.01 || st.CostUSD <= 0 || st.SessionKey != "sl-1" {
		t.Errorf("cached status %+v; want model %q, context %.2f%%", st, in.Model.DisplayName, want)
	}
	waitUntil(t, 30*time.Second, "the user's statusLine on the screen", func() bool {
		screen, _ := srv.Capture(ctx, c.Pane, 0)
		return strings.Contains(screen, "USER-STATUSLINE-OK")
	})
}

// turnOn adds settings to each of the bridge's projects before its first
// session.
func (b *bridge) turnOn(settings string) {
	b.t.Helper()
	b.reconfigure(func(cfg string) string { return projectPath.ReplaceAllString(cfg, "${0}"+settings) })
}

// projectPath is a project's path line in the harness's config.
var projectPath = regexp.MustCompile(`(?m)^  path = ".*"\n`)

// pane is the tmux pane of a project's session.
func (b *bridge) pane(p *project) string {
	b.t.Helper()
	s, err := b.store.Sessions.Get(p.key)
	if err != nil || s.PaneID == "" {
		b.t.Fatalf("no pane for %s: %+v %v", p.key, s, err)
	}
	return s.PaneID
}

// typeInPane types text at the terminal, as a person at the keyboard.
func (b *bridge) typeInPane(p *project, text string) {
	b.t.Helper()
	ctx := context.Background()
	if err := b.tmux.PasteTextIf(ctx, b.pane(p), tmux.Guard{}, text); err != nil {
		b.t.Fatal(err)
	}
	if err := b.tmux.SendKeys(ctx, b.pane(p), tmux.KeyEnter); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bridge) index(p *project, want string) int {
	for i, c := range b.contents(p.channel) {
		if strings.Contains(c, want) {
			return i
		}
	}
	return -1
}

var footerRE = regexp.MustCompile(`\n-# Opus 5\.5 · ctx 42% · \$\d+\.\d\d$`)

// The footer shows the model and the context the fake API's usage implies
// (420,000 of Opus 5.5's 1,000,000 tokens: 42%); a prompt typed in the
// pane is posted, marked, before its reply; /clear typed in the pane is
// announced with the new Claude session id; short turns ping nobody.
func TestFooterTerminalPromptsAndClear(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.turnOn("  footer = \"on\"\n")
	b.model.SetUsage(&fakemodel.Usage{InputTokens: 20000, CacheCreationInputTokens: 100000, CacheReadInputTokens: 300000, OutputTokens: 40})
	b.say(p, "hello footer")
	reply := b.waitReply(p, "ok: hello footer")
	if !strings.HasPrefix(reply.Content, "ok: hello footer\n-# Opus 5.5") {
		t.Errorf("reply %q was posted without a footer", reply.Content)
	}
	// The reply does not wait for the turn's own statusLine: its figures
	// are edited in when they come.
	reply = b.srv.WaitMessage(long, "the turn's own figures in the footer", func(m *fakediscord.Message) bool {
		return m.ID == reply.ID && footerRE.MatchString(m.Content) && strings.HasPrefix(m.Content, "ok: hello footer\n-# ")
	})

	b.typeInPane(p, "typed in the pane")
	b.waitReply(p, "ok: typed in the pane")
	mirror, answer := b.index(p, "⌨️ **Typed at the terminal:**\n> typed in the pane"), b.index(p, "ok: typed in the pane")
	if mirror < 0 || mirror > answer {
		t.Errorf("terminal prompt at %d, its reply at %d; channel %q", mirror, answer, b.contents(p.channel))
	}

	before, _ := b.store.Sessions.Get(p.key)
	b.typeInPane(p, "/clear")
	var after state.Session
	waitUntil(t, long, "a new Claude session after /clear", func() bool {
		after, _ = b.store.Sessions.Get(p.key)
		return after.ClaudeSessionID != "" && after.ClaudeSessionID != before.ClaudeSessionID
	})
	b.waitReply(p, "🆕 Context cleared: new Claude session `"+after.ClaudeSessionID+"`.")

	// Nothing was mirrored twice, nothing from Discord was mirrored, and
	// no message mentioned anyone.
	for _, m := range b.botMessages(p.channel) {
		if got := b.srv.Mentioned(m.ID); len(got) > 0 {
			t.Errorf("%q mentions %v", m.Content, got)
		}
		if strings.Contains(m.Content, "Typed at the terminal") && strings.Contains(m.Content, "hello footer") {
			t.Errorf("a prompt from Discord was mirrored: %q", m.Content)
		}
	}
	if n := strings.Count(strings.Join(b.contents(p.channel), "\n"), "Typed at the terminal"); n != 1 {
		t.Errorf("%d terminal prompts mirrored, want 1: %q", n, b.contents(p.channel))
	}
}

// A card left unanswered past attention_after mentions the owner, exactly
// once and only the owner; the turn it belongs to, answered, pings no more.
func TestUnansweredCardMentionsTheOwnerOnce(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.turnOn("  footer = \"off\"\n  attention_after = \"3s\"\n")
	b.model.Script("SCN_WAIT", fakemodel.Tool("", "Bash", map[string]any{"command": "touch waited.txt", "description": "Create waited.txt"}))
	b.say(p, "SCN_WAIT")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch waited.txt") })
	ping := b.waitReply(p, "for your answer on the card above")
	if got := b.srv.Mentioned(ping.ID); len(got) != 1 || got[0] != b.owner.ID {
		t.Errorf("ping %q notifies %v, want only the owner %s", ping.Content, got, b.owner.ID)
	}
	if !strings.HasPrefix(ping.Content, "<@"+b.owner.ID+"> ") {
		t.Errorf("ping %q", ping.Content)
	}
	// Claude's own permission_prompt Notification (about 6 s after the
	// dialog) comes and goes without a message or a second ping.
	waitUntil(t, long, "Claude's permission_prompt Notification", func() bool {
		w, err := b.store.Sessions.Get(p.key)
		return err == nil && w.LastEvent == "Notification"
	})
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitReply(p, "Done. Last tool result")
	pings := 0
	for _, m := range b.botMessages(p.channel) {
		if len(b.srv.Mentioned(m.ID)) > 0 {
			pings++
		}
		if strings.Contains(m.Content, "needs your permission") {
			t.Errorf("the Notification was posted: %q", m.Content)
		}
	}
	if pings != 1 {
		t.Errorf("%d pings, want 1; channel %q", pings, b.contents(p.channel))
	}
}

// A turn that fails on a usage limit says when it resets and offers
// Continue at reset; clicked, and with the daemon restarted meanwhile,
// "continue" reaches Claude once the (shortened) reset time has passed.
func TestUsageLimitContinueAtReset(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	// Claude's messages give the reset to the minute: the next minute at
	// least 25 s away, for the click and a restart to happen before it.
	reset := time.Now().Add(25 * time.Second).Truncate(time.Minute).Add(time.Minute).UTC()
	// The headers of a plan's exhausted 5-hour limit, with a long
	// retry-after (hours, as for a real plan limit): Claude Code fails the
	// turn at once, with no retries, and StopFailure error rate_limit.
	at := strconv.FormatInt(reset.Unix(), 10)
	b.model.SetHeaders(map[string]string{"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": at,
		"anthropic-ratelimit-unified-5h-status": "rejected", "anthropic-ratelimit-unified-5h-reset": at, "anthropic-ratelimit-unified-5h-utilization": "1.0",
		"anthropic-ratelimit-unified-representative-claim": "five_hour", "retry-after": "3600"})
	// Claude keeps the failed prompt and sends it again with "continue"
	// after it: only the first request fails.
	var calls atomic.Int32
	b.model.Script("SCN_LIMIT", fakemodel.Step{Dynamic: func(r fakemodel.Request) fakemodel.Step {
		if calls.Add(1) == 1 {
			return fakemodel.Step{Status: 429, ErrMsg: "You've hit your 5-hour limit · resets " + strings.ToLower(reset.Format("3:04PM")) + " (UTC)"}
		}
		return fakemodel.Text("continued after the reset")
	}})
	b.say(p, "SCN_LIMIT please")
	failure := b.waitReply(p, "The usage limit resets at "+reset.Format("15:04")+" UTC")
	if !strings.Contains(failure.Content, "rate_limit") {
		t.Errorf("failure %q", failure.Content)
	}
	offer := b.waitReply(p, "Send \"continue\" to Claude when the limit resets")
	b.model.SetHeaders(nil)
	var button string
	for _, id := range offer.CustomIDs() {
		button = id
	}
	it := b.srv.Click(offer.ID, button, b.owner)
	b.srv.WaitResponse(it, 5*time.Second)
	b.srv.WaitMessage(10*time.Second, "the armed offer", func(m *fakediscord.Message) bool {
		return m.ID == offer.ID && strings.Contains(m.Content, "will send \"continue\"")
	})
	b.reconfigure(func(cfg string) string { return cfg }) // a daemon restart before the reset

	// Until the reset, nothing is sent (checked just before it).
	time.Sleep(time.Until(reset.Add(-2 * time.Second)))
	for _, r := range b.model.Requests() {
		if strings.HasSuffix(r.LastUserText, "continue") {
			t.Fatalf("\"continue\" sent before the reset at %s", reset)
		}
	}
	b.model.WaitRequest(t, long, "continue after the reset", func(r fakemodel.Request) bool { return strings.HasSuffix(r.LastUserText, "continue") })
	if time.Now().Before(reset) {
		t.Errorf("\"continue\" reached Claude at %s, before the reset at %s", time.Now(), reset)
	}
	b.waitReply(p, "The usage limit has reset: sent \"continue\" to Claude.")
	b.waitReply(p, "continued after the reset")
	n := 0
	for _, r := range b.model.Requests() {
		if strings.HasSuffix(r.LastUserText, "continue") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("\"continue\" sent %d times", n)
	}
	for _, c := range b.contents(p.channel) {
		if strings.Contains(c, "Typed at the terminal") {
			t.Errorf("ccbridge's own \"continue\" was mirrored: %q", c)
		}
	}
}

// progress = "live": a turn with three tool calls leaves one activity
// message, edited in place (never re-posted) at most once per 1.5 s, that
// ends as a one-line summary, and the reply after it.
func TestLiveProgressIsOneEditedMessage(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.turnOn("  footer = \"off\"\n  progress = \"live\"\n")
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		os.WriteFile(filepath.Join(p.dir, f), []byte("content of "+f+"\n"), 0o644)
	}
	b.model.Script("SCN_LIVE",
		fakemodel.Tool("Let me read a.", "Read", map[string]any{"file_path": filepath.Join(p.dir, "a.txt")}),
		fakemodel.Tool("Now b.", "Read", map[string]any{"file_path": filepath.Join(p.dir, "b.txt")}),
		fakemodel.Tool("And c.", "Read", map[string]any{"file_path": filepath.Join(p.dir, "c.txt")}))
	b.say(p, "SCN_LIVE go")
	b.waitReply(p, "Done. Last tool result")
	act := b.waitReply(p, "3 tool(s) run")
	msgs := b.botMessages(p.channel)
	if len(msgs) != 2 || msgs[0].ID != act.ID || !strings.HasPrefix(msgs[1].Content, "Done. Last tool result") {
		t.Fatalf("channel %q; want the activity message then the reply", b.contents(p.channel))
	}
	if !regexp.MustCompile(`^-# ⚙️ 3 tool\(s\) run · \d+s$`).MatchString(act.Content) {
		t.Errorf("summary %q", act.Content)
	}
	m, _ := b.srv.Message(act.ID)
	if m.Edits < 1 {
		t.Errorf("the activity message was never edited")
	}
	times := append([]time.Time{m.Created()}, m.EditedAt...)
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 1500*time.Millisecond {
			t.Errorf("edit %d came %s after the previous one; the debounce is 1.5 s", i, gap)
		}
	}
	// What it showed while the turn ran: Claude's text and the tools.
	drawn := strings.Join(m.History, "\n")
	for _, want := range []string{"⚙️ **Working**", "💬 Let me read a.", "🔧 Read `" + filepath.Join(p.dir, "a.txt") + "`"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the activity message never showed %q; it showed %q", want, m.History)
		}
	}
	if !regexp.MustCompile(`(✅ done|⏳ running) · \d+s`).MatchString(drawn) {
		t.Errorf("no tool state with its time in %q", m.History)
	}
	for _, c := range b.contents(p.channel) {
		if strings.Contains(c, "Let me read a.") {
			t.Errorf("a separate progress message: %q", c)
		}
	}
}

// A daemon restarted mid-turn keeps editing the same activity message.
func TestLiveProgressSurvivesADaemonRestart(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.turnOn("  footer = \"off\"\n  progress = \"live\"\n")
	os.WriteFile(filepath.Join(p.dir, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(p.dir, "b.txt"), []byte("b\n"), 0o644)
	second := fakemodel.Tool("Then b.", "Read", map[string]any{"file_path": filepath.Join(p.dir, "b.txt")})
	second.Delay = 8 * time.Second // the model thinks while the daemon restarts
	b.model.Script("SCN_SLOWLIVE", fakemodel.Tool("First a.", "Read", map[string]any{"file_path": filepath.Join(p.dir, "a.txt")}), second)
	b.say(p, "SCN_SLOWLIVE go")
	act := b.waitReply(p, "⚙️ **Working**")
	b.model.WaitRequest(t, long, "the request after the first tool", func(r fakemodel.Request) bool {
		return len(r.ToolResults) == 1 && strings.Contains(r.LastUserText, "SCN_SLOWLIVE")
	})
	b.reconfigure(func(cfg string) string { return cfg })
	b.waitReply(p, "Done. Last tool result")
	b.srv.WaitMessage(long, "the summary", func(m *fakediscord.Message) bool {
		return m.ID == act.ID && strings.Contains(m.Content, "2 tool(s) run")
	})
	if msgs := b.botMessages(p.channel); len(msgs) != 2 || msgs[0].ID != act.ID {
		t.Fatalf("channel %q; want one activity message and the reply", b.contents(p.channel))
	}
	m, _ := b.srv.Message(act.ID)
	if !strings.Contains(strings.Join(m.History, "\n"), "Then b.") {
		t.Errorf("the restarted daemon did not draw the rest of the turn: %q", m.History)
	}
}

// Claude Code 2.1.328 fires PreModelSwitch and PostModelSwitch on /model.
// On a cached conversation /model first asks "Switch model?": Pre fires
// before the dialog, Post only once the switch is confirmed. (Evidence for confirming /model by
// this hook instead of reading the screen.)
func TestPostModelSwitchFires(t *testing.T) {
	t.Parallel()
	model := fakemodel.New(t)
	srv := tmuxtest.New(t)
	logf := filepath.Join(t.TempDir(), "hooks.jsonl")
	hook := filepath.Join(t.TempDir(), "log-hook.sh")
	os.WriteFile(hook, []byte("#!/bin/sh\n{ cat; echo; } >> '"+logf+"'\n"), 0o755)
	s := claudehook.Settings{Hooks: map[string][]claudehook.HookMatcher{}}
	for _, ev := range []string{"PreModelSwitch", "PostModelSwitch"} {
		s.Hooks[ev] = []claudehook.HookMatcher{{Hooks: []claudehook.HookCommand{{Type: "command", Command: hook}}}}
	}
	c := claudetest.Start(t, claudetest.Options{Tmux: srv, Session: "pms", Dir: t.TempDir(), ModelURL: model.URL, Settings: s.JSON()})
	ctx := context.Background()
	send := func(text string) {
		t.Helper()
		if err := srv.PasteTextIf(ctx, c.Pane, tmux.Guard{}, text); err != nil {
			t.Fatal(err)
		}
		srv.SendKeys(ctx, c.Pane, tmux.KeyEnter)
	}
	type switchEvent struct {
		Event string `json:"hook_event_name"`
		From  string `json:"from_model"`
		To    string `json:"to_model"`
		Asked string `json:"requested_model"`
		Src   string `json:"source"`
	}
	events := func() []switchEvent {
		b, _ := os.ReadFile(logf)
		var out []switchEvent
		for _, l := range strings.Split(string(b), "\n") {
			var e switchEvent
			if json.Unmarshal([]byte(l), &e) == nil && e.Event != "" {
				out = append(out, e)
			}
		}
		return out
	}
	send("/model sonnet")
	waitUntil(t, 30*time.Second, "PostModelSwitch after /model sonnet", func() bool { return len(events()) == 2 })
	if e := events(); e[0].Event != "PreModelSwitch" || e[1] != (switchEvent{"PostModelSwitch", "claude-opus-5-5", "claude-sonnet-5-5", "sonnet", "command"}) {
		t.Errorf("events %+v", e)
	}

	// A cached conversation: the switch waits for "Switch model?".
	model.ReportCache(true)
	c.WaitReady(t, 30*time.Second)
	send("hello cache")
	t.Cleanup(func() {
		if t.Failed() {
			screen, _ := srv.Capture(ctx, c.Pane, 0)
			t.Logf("screen:\n%s", screen)
		}
	})
	model.WaitRequest(t, 30*time.Second, "the cached turn", func(r fakemodel.Request) bool { return strings.HasSuffix(r.LastUserText, "hello cache") })
	c.WaitReady(t, 30*time.Second)
	send("/model opus")
	waitUntil(t, 30*time.Second, "the Switch model? dialog", func() bool {
		screen, _ := srv.Capture(ctx, c.Pane, 0)
		return strings.Contains(screen, "Switch model?")
	})
	// PreModelSwitch fires before the dialog, PostModelSwitch only after it.
	waitUntil(t, 10*time.Second, "PreModelSwitch with the dialog open", func() bool { return len(events()) == 3 })
	if e := events(); e[2].Event != "PreModelSwitch" || e[2].To != "claude-opus-5-5" {
		t.Fatalf("events with the dialog open: %+v", e)
	}
	srv.SendKeys(ctx, c.Pane, tmux.KeyEnter) // "1. Yes, switch" is selected
	waitUntil(t, 30*time.Second, "PostModelSwitch after confirming", func() bool {
		e := events()
		return len(e) > 2 && e[len(e)-1].Event == "PostModelSwitch"
	})
	e := events()
	if last := e[len(e)-1]; last.To != "claude-opus-5-5" || last.From != "claude-sonnet-5-5" {
		t.Errorf("events %+v", e)
	}
	t.Logf("model switch events: %+v", e)
}

// With attention_turn = "3s": a fast turn's reply pings nobody; a turn that
// ran longer mentions the owner once, after its reply.
func TestLongTurnPingsFastTurnDoesNot(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.turnOn("  footer = \"off\"\n  attention_turn = \"3s\"\n")
	slow := fakemodel.Text("slow answer")
	slow.Delay = 4 * time.Second
	b.model.Script("SCN_SLOW_TURN", slow)
	b.say(p, "fast one")
	b.waitReply(p, "ok: fast one")
	b.say(p, "SCN_SLOW_TURN")
	b.waitReply(p, "slow answer")
	ping := b.waitReply(p, "Claude is done (the turn ran")
	if got := b.srv.Mentioned(ping.ID); len(got) != 1 || got[0] != b.owner.ID {
		t.Errorf("ping %q notifies %v", ping.Content, got)
	}
	var pings []string
	for _, m := range b.botMessages(p.channel) {
		if len(b.srv.Mentioned(m.ID)) > 0 {
			pings = append(pings, m.Content)
		}
	}
	if len(pings) != 1 {
		t.Errorf("pings %q, want only the slow turn's", pings)
	}
	if b.index(p, "slow answer") > b.index(p, "Claude is done") {
		t.Errorf("the ping came before the reply: %q", b.contents(p.channel))
	}
}
