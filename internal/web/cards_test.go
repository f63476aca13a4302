package web

import (
	"strings"
	"testing"
	"time"
)

// The session page shows what the reply footer shows (model, context,
// cost) and the cards the session asked, each with what was decided, all
// through the Discord redaction; the outcome's Markdown is rendered, never
// its markup.
func TestSessionShowsCardsAndFigures(t *testing.T) {
	e := newEnv(t)
	write(t, e.transcript, userLine("run it")+toolLines("toolu_1", "touch x", ""))
	at := time.Date(2026, 11, 28, 9, 58, 0, 0, time.UTC)
	e.sessions.mu.Lock()
	e.sessions.list[0].Figures = "Opus 5.5 · ctx 42% · $0.25"
	e.sessions.list[0].Cards = []Card{
		{Tool: "Bash", Input: `{"command":"touch x hunter2hunter2"}`, Status: "decided", Outcome: "✅ **Allowed** by <@42> <img src=x>", At: at},
		{Tool: "AskUserQuestion", Input: `{"questions":[]}`, Status: "expired", At: at.Add(time.Minute)},
	}
	e.sessions.mu.Unlock()
	b := body(t, e.get(t, e.path(SessionScope("proj"))))
	for _, want := range []string{
		`<p class="figures">Opus 5.5 · ctx 42% · $0.25</p>`,
		`<summary>Bash`,
		`touch x [redacted]`,
		`<strong>Allowed</strong> by an owner &lt;img src=x&gt;`,
		`<summary>AskUserQuestion`,
		"Expired: answered in the terminal, or not at all",
		"09:58",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("page lacks %q:\n%s", want, b)
		}
	}
	for _, bad := range []string{"hunter2hunter2", "<img", "@42"} {
		if strings.Contains(b, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	// An earlier page is the conversation's past: no cards, no figures.
	if b := body(t, e.get(t, e.path(SessionScope("proj"))+"?before=10")); strings.Contains(b, `class="figures"`) || strings.Contains(b, `class="cards"`) {
		t.Errorf("an earlier page shows the session's cards or figures:\n%s", b)
	}
}

// A session with no figures and no cards shows neither block.
func TestSessionWithoutCardsOrFigures(t *testing.T) {
	e := newEnv(t)
	b := body(t, e.get(t, e.path(SessionScope("proj"))))
	if strings.Contains(b, `class="figures"`) || strings.Contains(b, `class="cards"`) {
		t.Errorf("empty blocks drawn:\n%s", b)
	}
}

// A Bash call shows its command as it is, and its description beside the
// tool's name, not the JSON of both.
func TestToolCallShowsCommandAndDescription(t *testing.T) {
	e := newEnv(t)
	write(t, e.transcript, `{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"touch <x>","description":"Touch a file"}}]}}`+"\n")
	b := body(t, e.get(t, e.path(SessionScope("proj"))))
	want := `<summary>Bash <span class="desc">Touch a file</span></summary><pre class="input">touch &lt;x&gt;</pre>`
	if !strings.Contains(b, want) {
		t.Errorf("page lacks %q:\n%s", want, b)
	}
}

// Claude Code writes lines the page does not show (prompt snapshots,
// request shapes: tens of KiB each turn): the first page still holds the
// turn's prompt, reading further back than one window until it has enough
// to show.
func TestSessionFirstPageReachesPastLinesItDoesNotShow(t *testing.T) {
	e := newEnv(t)
	var s strings.Builder
	s.WriteString(userLine("THE-PROMPT"))
	for s.Len() < 3*pageBytes {
		s.WriteString(`{"type":"attachment","attachment":{"type":"prompt_snapshot","systemPrompt":["` + strings.Repeat("x", 60<<10) + `"]}}` + "\n")
	}
	s.WriteString(replyLine("m1", "THE-REPLY"))
	write(t, e.transcript, s.String())
	b := body(t, e.get(t, e.path(SessionScope("proj"))))
	if !strings.Contains(b, "THE-PROMPT") || !strings.Contains(b, "THE-REPLY") {
		t.Errorf("the first page does not hold the turn:\n%s", b)
	}
}
