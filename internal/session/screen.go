package session

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/agent"
)

// Screen markers of Claude Code 2.1.328 (claude-code-protocol.md §6.1).
// They decide only whether typing is safe and whether the TUI is up; what
// Claude is doing is learned from hooks. The conversation above the input
// box is free text Claude writes, so they are looked for only where Claude
// draws a dialog (see dialogArea), never in a reply.
var dialogMarkers = append(slices.Clone(hookMarkers),
	"Exiting worktree session",
	// The dialogs at start (§12): folder trust (2.1.328's wording; the
	// older "Do you trust the files in this folder?" is gone) and the
	// auto-mode nudge, which shows no "Esc to cancel" at first.
	"Quick safety check:",
	"Make auto mode your default permission mode?",
	"Esc to cancel",
)

// hookMarkers are the words of the dialogs a hook reports, each with its
// card (permission, edit and write, question, plan): such a dialog is the
// card's, never one to show by itself (see hookDialog).
var hookMarkers = []string{
	// Codex's command approval, which its PermissionRequest card stands for.
	"Would you like to run the following command?",
	"Do you want to proceed?",
	"Do you want to create ",
	"Do you want to make this edit",
	"Esc to cancel · Tab to amend",
	"Enter to select · ↑/↓ to navigate",
	"Tab/Arrow keys to navigate",
	"Review your answers",
	"Would you like to proceed?",
	"Ready to code?",
	"Exit plan mode?",
	// WebFetch's permission dialog asks its own question.
	"Do you want to allow Claude to fetch this content?",
	"Claude wants to fetch content from",
}

// dialogChrome are the hint lines Claude draws under its dialogs' choices
// and never in a reply (checked on 2.1.328's captures in testdata): what
// tmux's guard looks for anywhere on the screen, which it cannot split into
// conversation and dialog.
var dialogChrome = []string{
	"Esc to cancel · Tab to amend",      // permission, edit, write
	"Enter to confirm · Esc to cancel",  // folder trust, "Switch model?"
	"Enter to select · ↑/↓ to navigate", // a question
	"Tab/Arrow keys to navigate",        // several questions
	"ctrl+g to edit in Vim",             // plan
	"shift+tab to approve with this feedback",
	// The auto-mode nudge shows no hint line until its highlight moves:
	// its first choice stands for it.
	"Yes, set auto mode as my default permission mode",
	"↑/↓ to choose · Esc to cancel",
	// WebFetch's permission dialog draws no hint line: its question
	// stands for it (a reply quoting it is held back, which fails safe).
	"Do you want to allow Claude to fetch this content?",
}

// dialogArea returns the lines where Claude draws a dialog, and false when
// its input box is shown: a dialog replaces the box (§6.1), so none is open
// then, whatever the conversation above says. The area starts at the
// dialog's top: the last rule (or the ▔ line "Switch model?" and the plan
// open with) above the highlighted choice, or above the bottom when there
// is none; the top of the screen when there is no such line.
func dialogArea(screen string) ([]string, bool) {
	if _, _, ok := inputBox(screen); ok {
		return nil, false
	}
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	sel := len(lines)
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimLeft(lines[i], " "), "❯ ") {
			sel = i
			break
		}
	}
	start, top := 0, false
	for i := sel - 1; i >= 0; i-- {
		if isRule(lines[i]) && !top {
			start, top = i, true
		}
		// The plan's dialog opens with ▔ and rules its question off
		// below it: the ▔ line is the top, when it is the dialog's.
		if strings.Contains(lines[i], "▔▔▔▔") {
			if !top || !slices.ContainsFunc(lines[i+1:start], conversation) {
				start = i
			}
			break
		}
	}
	return lines[start:], true
}

// conversation reports whether a line is Claude's or the person's turn in
// the conversation ("● …", "❯ …" at the margin), not a dialog's.
func conversation(l string) bool { return strings.HasPrefix(l, "● ") || strings.HasPrefix(l, "❯ ") }

// markerLine returns the index of the first line holding one of markers.
func markerLine(lines, markers []string) int {
	return slices.IndexFunc(lines, func(l string) bool {
		return slices.ContainsFunc(markers, func(m string) bool { return strings.Contains(l, m) })
	})
}

// DialogOpen reports whether the screen shows a dialog, into which typed
// text would be taken as an answer (Enter picks the highlighted option):
// no input box, and one of the known markers where Claude draws dialogs,
// or choices where the box should be (a dialog a later release added).
func DialogOpen(screen string) bool {
	area, ok := dialogArea(screen)
	if !ok {
		return false
	}
	if markerLine(area, dialogMarkers) >= 0 {
		return true
	}
	_, ok = ParseDialog(screen)
	return ok
}

// DialogText returns the dialog on the screen, from its top (see
// dialogArea) to the bottom, lines right-trimmed; "" when no dialog is
// open. The same dialog, with the same option highlighted, gives the same
// text however the conversation above it moves (a background agent's
// progress, say).
func DialogText(screen string) string {
	if !DialogOpen(screen) {
		return ""
	}
	area, _ := dialogArea(screen)
	out := make([]string, 0, len(area))
	for _, l := range area {
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.Join(out, "\n")
}

// InputReady reports whether the screen shows Claude's idle input box: a
// line starting with ❯ between two rules, and no turn running.
func InputReady(screen string) bool {
	box, footer, ok := inputBox(screen)
	return ok && !strings.Contains(box, "\n") && !slices.ContainsFunc(footer, running)
}

// Busy reports whether the footer says a turn (or a sync hook) is running.
// With the input box shown, only its footer counts: the conversation above
// it is Claude's prose, which may name the key. Without the box (a dialog
// in its place) the whole screen is read.
func Busy(screen string) bool {
	if _, footer, ok := inputBox(screen); ok {
		return slices.ContainsFunc(footer, running)
	}
	return running(screen)
}

// running: Claude's mark of a turn (or a sync hook) in progress.
func running(text string) bool { return strings.Contains(text, "esc to interrupt") }

// LastLines returns the last n non-blank-trailing lines of a screen.
func LastLines(screen string, n int) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// isRule reports whether a line is one of the rules around the input box.
func isRule(line string) bool { return strings.Contains(line, "────") }

// inputBox finds Claude's input box, the last line starting with ❯ (or !,
// in bash mode) that a rule precedes, and returns its text up to the
// closing rule (wrapped lines included) and the lines below the box (the
// footer). ok is false when no such box is on the screen, as while a
// dialog has replaced it.
func inputBox(screen string) (text string, footer []string, ok bool) {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for i := len(lines) - 2; i >= 1; i-- {
		first := strings.TrimSpace(lines[i])
		if !isRule(lines[i-1]) || !(strings.HasPrefix(first, "❯") || strings.HasPrefix(first, "!")) {
			continue
		}
		var body []string
		for j := i; j < len(lines); j++ {
			if isRule(lines[j]) {
				footer := lines[j+1:]
				// A reply can draw rules and a ❯ line: below the real
				// box is its footer, no line of which starts as a
				// dialog's top or its highlighted choice does. (Lines
				// are looked at from their start: at 110 columns and
				// more, Claude's diff panel draws its own borders to
				// their right.)
				if slices.ContainsFunc(footer, func(l string) bool {
					l = strings.TrimLeft(l, " ")
					return strings.HasPrefix(l, "────") || strings.HasPrefix(l, "▔▔▔▔") || strings.HasPrefix(l, "❯")
				}) {
					return "", nil, false
				}
				return strings.Join(body, "\n"), footer, true
			}
			body = append(body, lines[j])
		}
	}
	return "", nil, false
}

// InputBoxShown reports whether Claude's input box, and so no dialog, is
// on the screen: what a key pressed now would reach.
func InputBoxShown(screen string) bool {
	_, _, ok := inputBox(screen)
	return ok
}

// InputHolds reports whether the input box shows text as typed: the box
// starts with the text (spaces and line breaks ignored, since Claude wraps
// and re-indents), or with the placeholder Claude shows for a long paste.
func InputHolds(screen, text string) bool {
	box, _, ok := inputBox(screen)
	if !ok {
		return false
	}
	return agent.BoxHolds(strings.TrimPrefix(strings.TrimSpace(box), "❯"), text, "[Pasted text #")
}

// footerModes maps the footer's mode names to permission modes
// (claude-code-protocol.md §6.1).
var footerModes = []struct{ shown, mode string }{
	{"manual mode on", "default"},
	{"accept edits on", "acceptEdits"},
	{"plan mode on", "plan"},
	{"auto mode on", "auto"},
	{"bypass permissions on", "bypassPermissions"},
	{"don't ask on", "dontAsk"},
}

// ModeShown returns the permission mode the footer under the input box
// shows, or "" when there is no input box or no mode in it.
func ModeShown(screen string) string {
	_, footer, ok := inputBox(screen)
	if !ok {
		return ""
	}
	for _, line := range footer {
		for _, m := range footerModes {
			if strings.Contains(line, m.shown) {
				return m.mode
			}
		}
	}
	return ""
}

// Condense makes a screen readable in one chat message: trailing spaces
// are cut, runs of blank lines become one, at most maxLines lines and
// maxRunes characters are kept, from the bottom, where the input box or
// the dialog is, with the lines just above it. A "…" line says that the
// top was cut.
func Condense(screen string, maxLines, maxRunes int) string {
	var out []string
	blank := true // drops leading blank lines
	for _, line := range strings.Split(screen, "\n") {
		line = strings.TrimRight(line, " \t")
		if strings.TrimSpace(line) == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, line)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	cut := false
	if maxLines > 0 && len(out) > maxLines {
		out, cut = out[len(out)-maxLines+1:], true
	}
	size := func() int {
		n := 0
		for _, l := range out {
			n += utf8.RuneCountInString(l) + 1
		}
		if cut {
			n += 2
		}
		return n
	}
	for len(out) > 1 && size() > maxRunes {
		out, cut = out[1:], true
	}
	if len(out) == 1 && size() > maxRunes {
		r := []rune(out[0])
		out[0] = string(r[max(0, len(r)-maxRunes+3):])
		cut = true
	}
	if cut {
		out = append([]string{"…"}, out...)
	}
	return strings.Join(out, "\n")
}

// Queued reports whether the screen shows messages waiting in Claude
// Code's own queue (typed while a turn ran). Claude Code runs them after
// the turn, but takes a message typed while they wait, just as a turn
// ends, before them: so nothing is typed while any are queued.
func Queued(screen string) bool {
	return strings.Contains(screen, "Queued · ctrl+x ctrl+s to send now") || strings.Contains(screen, "Press up to edit queued messages")
}
