// Package codex is the agent adapter for OpenAI's Codex CLI 0.171.0 (see
// docs agents.md §1): how its TUI reads, and its command line, with
// ccbridge's hooks registered for the one process (-c overrides) so the
// user's own Codex config is never written.
package codex

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ccbridge/ccbridge/internal/agent"
)

// Codex is the adapter.
type Codex struct {
	// Command, Args and Environ are [codex].command, args and env.
	Command string
	Args    []string
	Environ map[string]string
}

// Name is the config's name of the agent.
func (Codex) Name() string { return "codex" }

// Speaker is "Codex".
func (Codex) Speaker() string { return "Codex" }

// Program is [codex].command.
func (c Codex) Program() (command, key, title string) {
	return c.Command, "[codex].command", "Codex CLI"
}

// Env is [codex].env.
func (c Codex) Env() map[string]string { return c.Environ }

// composerMark starts the composer line, and also each highlighted choice
// of a dialog ("› 1. Yes, proceed (y)"), told apart by dialogChoice.
const composerMark = "›"

var dialogChoice = regexp.MustCompile(`^›\s*\d+\.\s`)

// dialogChrome: the key hints under each of Codex's dialogs (approval,
// folder trust, hook review, question, plan approval; agents.md §1.1, §1.4).
var dialogChrome = []string{
	"Press enter to confirm or esc to cancel",
	"enter continue · esc back",
	"enter confirm · esc skip",
	"enter to submit answer",
	"tab to add notes",          // every question, the last of several too ("enter to submit all")
	"tab or esc to clear notes", // a question's notes field
	"enter select · esc back",
	"Would you like to run the following command?",
}

// DialogChrome are the strings only a dialog shows.
func (Codex) DialogChrome() []string { return slices.Clone(dialogChrome) }

// InterruptedMark is what Codex prints under a turn an Escape ended.
func (Codex) InterruptedMark() string { return "Conversation interrupted" }

// DialogMark starts a dialog's highlighted choice.
func (Codex) DialogMark() string { return composerMark }

// DialogTop: Codex draws its dialogs under the conversation with no rule
// above them; the last conversation item ("• " for the model, "› " for a
// prompt) ends what is above the dialog.
func (Codex) DialogTop(line string) bool {
	l := strings.TrimSpace(line)
	return strings.HasPrefix(l, "• ") || strings.HasPrefix(l, composerMark+" ")
}

// composer finds the composer: the last line starting with › that is not a
// dialog's choice, with a footer below it. It returns the composer's text
// (with its wrapped lines and the footer after them: callers compare
// prefixes) and the lines above it.
func composer(screen string) (text string, above []string, ok bool) {
	for _, c := range dialogChrome {
		if strings.Contains(screen, c) {
			return "", nil, false
		}
	}
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, composerMark) {
			continue
		}
		if dialogChoice.MatchString(l) || i == len(lines)-1 {
			return "", nil, false
		}
		return strings.Join(lines[i:], "\n"), lines[:i], true
	}
	return "", nil, false
}

// DialogOpen reports whether one of Codex's dialogs is up: its key hints,
// or a highlighted numbered choice as the last › line.
func (Codex) DialogOpen(screen string) bool {
	for _, c := range dialogChrome {
		if strings.Contains(screen, c) {
			return true
		}
	}
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, composerMark) {
			return dialogChoice.MatchString(l)
		}
	}
	return false
}

// InputBoxShown reports whether the composer, and no dialog, is shown.
func (Codex) InputBoxShown(screen string) bool {
	_, _, ok := composer(screen)
	return ok
}

// statusReach is how many lines above the composer its status line may
// be ("• Working (3s • esc to interrupt)", then a queued message or two).
const statusReach = 6

// Busy reports whether the status line above the composer says a turn
// runs; the conversation further up is the model's prose, which may name
// the key.
func (Codex) Busy(screen string) bool {
	_, above, ok := composer(screen)
	if !ok {
		return strings.Contains(screen, "esc to interrupt")
	}
	return slices.ContainsFunc(above[max(0, len(above)-statusReach):], func(l string) bool {
		return strings.Contains(l, "esc to interrupt")
	})
}

// InputReady: the composer is shown with the model's footer line (Codex
// shows the composer while it still loads, with only "? for shortcuts"
// under it; text typed then was seen lost) and no turn runs.
func (c Codex) InputReady(screen string) bool {
	box, _, ok := composer(screen)
	if !ok || c.Busy(screen) {
		return false
	}
	return slices.ContainsFunc(strings.Split(box, "\n")[1:], func(l string) bool {
		return strings.Contains(l, " · ") && !strings.Contains(l, "shortcuts")
	})
}

// InputHolds reports whether the composer starts with text (spaces and
// line breaks ignored: Codex wraps), or with the placeholder it shows for a
// large paste.
func (Codex) InputHolds(screen, text string) bool {
	box, _, ok := composer(screen)
	if !ok {
		return false
	}
	return agent.BoxHolds(strings.TrimPrefix(strings.TrimSpace(box), composerMark), text, "[Pasted Content")
}
