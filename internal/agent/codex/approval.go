package codex

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/agent"
)

// Codex's approval dialog for a command (agents.md §1.4, re-checked on
// 0.171.0):
//
//	  Would you like to run the following command?
//	  …
//	  $ touch /tmp/out.txt
//	› 1. Yes, proceed (y)
//	  2. Yes, and don't ask again for commands that start with `touch` (p)
//	  3. No, and tell Codex what to do differently (esc)
//	  Press enter to confirm or esc to cancel
//
// A digit picks its choice at once ("2" as "p"); Escape is the No, which
// ends the turn. Choice 2 writes a prefix rule Codex keeps in its rules:
// the prefix is Codex's (from the model's prefix_rule, else derived; a
// command of several parts got the first part's words).
const (
	ApprovalQuestion = "Would you like to run the following command?"
	// AllowChoice and AlwaysChoice start the choices that the keys
	// AllowKey and AlwaysKey pick.
	AllowChoice  = "1. Yes, proceed"
	AlwaysChoice = "2. Yes, and don't ask again"
	AllowKey     = "1"
	AlwaysKey    = "2"
)

// alwaysScope reads the prefix of the "don't ask again" choice, which
// may wrap over lines.
var alwaysScope = regexp.MustCompile("don't ask again for commands that start with `([^`]*)` \\(p\\)")

// Approval is Codex's approval dialog as the screen shows it.
type Approval struct {
	// Always is the prefix "don't ask again" allows from then on; empty
	// when the dialog does not offer it.
	Always string
	// Lines are the dialog's command as drawn, one wrapped line each
	// (indent and trailing spaces cut), the first starting "$ ": what a
	// key pressed for this dialog requires on screen as whole lines.
	Lines []string
	// AlwaysLines are the "don't ask again" choice as drawn (its
	// highlight mark cut): pressing Always requires them, and so the
	// prefix shown, on screen.
	AlwaysLines []string
}

// firstChoice starts the line that ends the dialog's command block.
var firstChoice = regexp.MustCompile(`^1\. `)

// ReadApproval reads the approval dialog on screen when it asks about
// exactly command: the block from "$ " to the first choice, its wrapped
// lines joined, must be command, up to white space at the line breaks
// (Codex's wrapping drops a space there, or breaks a long word).
func ReadApproval(screen, command string) (Approval, bool) {
	command = strings.TrimSpace(command)
	if command == "" {
		return Approval{}, false
	}
	_, dialog, ok := strings.Cut(screen, ApprovalQuestion)
	if !ok {
		return Approval{}, false
	}
	var a Approval
	choices := false
	for line := range strings.Lines(dialog) {
		line = strings.TrimPrefix(strings.TrimSpace(line), "› ")
		switch {
		case firstChoice.MatchString(line):
			choices = true
		case !choices && line != "" && (len(a.Lines) > 0 || strings.HasPrefix(line, "$ ")):
			a.Lines = append(a.Lines, line)
		case choices && strings.HasPrefix(line, AlwaysChoice) || (len(a.AlwaysLines) > 0 && !strings.HasPrefix(line, "3. ")):
			a.AlwaysLines = append(a.AlwaysLines, line)
		}
		if strings.HasPrefix(line, "3. ") {
			break
		}
	}
	if len(a.Lines) == 0 {
		return Approval{}, false
	}
	quoted := make([]string, len(a.Lines))
	for i, l := range a.Lines {
		quoted[i] = regexp.QuoteMeta(l)
	}
	exact := "^" + strings.Join(quoted, `\s*`) + "$"
	if m, err := regexp.MatchString(exact, "$ "+command); err != nil || !m {
		return Approval{}, false
	}
	joined := strings.Join(strings.Fields(dialog), " ")
	if m := alwaysScope.FindStringSubmatch(joined); m != nil {
		a.Always = m[1]
	}
	return a, true
}

// broadPrefixes are shells and interpreters (and wrappers that run any
// command): an Always of one of them alone would let Codex run anything.
var broadPrefixes = map[string]bool{
	"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "pwsh": true,
	"python": true, "python2": true, "python3": true, "node": true, "deno": true, "bun": true,
	"perl": true, "ruby": true, "php": true, "lua": true, "osascript": true,
	"env": true, "sudo": true, "doas": true, "su": true, "exec": true, "eval": true, "command": true,
	"xargs": true, "nohup": true, "nice": true, "timeout": true, "time": true, "busybox": true, "npx": true,
}

// BroadPrefix reports whether an Always prefix is only a shell, an
// interpreter or a wrapper, with flags at most ("bash", "sh -c"): a rule
// Codex would then apply to every command in every project.
func BroadPrefix(prefix string) bool {
	words := strings.Fields(prefix)
	if len(words) == 0 {
		return true
	}
	name := words[0][strings.LastIndex(words[0], "/")+1:]
	if !broadPrefixes[name] {
		return false
	}
	for _, w := range words[1:] {
		if !strings.HasPrefix(w, "-") {
			return false
		}
	}
	return true
}

// Codex's question dialog (request_user_input, Plan mode only; agents.md
// §1.4, re-checked on 0.171.0): one question at a time, its options
// numbered and "None of the above" last; a digit picks and submits.
//
//	Question 1/1 (1 unanswered)
//	Which color do you prefer?
//	› 1. Red                The color red
//	  2. Blue               The color blue
//	  3. None of the above  Optionally, add details in notes (tab)
//	tab to add notes | enter to submit answer | esc to interrupt
//
// Of several questions, a digit answers one and shows the next; the last
// one's hint says "enter to submit all". Tab on a choice opens a notes
// field ("› Add notes", hint "tab or esc to clear notes"); "None of the
// above" with a note is Codex's free answer: the model gets
// ["None of the above","user_note: <text>"].
const (
	QuestionHint = "tab to add notes"
	NotesHint    = "tab or esc to clear notes"
	NoneOfAbove  = "None of the above"
)

// QuestionMark heads question i (from 0) of n.
func QuestionMark(i, n int) string { return "Question " + strconv.Itoa(i+1) + "/" + strconv.Itoa(n) }

// QuestionShown reports whether screen shows question i of n, asking q.
func QuestionShown(screen string, i, n int, q string) bool {
	_, rest, ok := strings.Cut(screen, QuestionMark(i, n)+" ")
	return ok && (strings.Contains(rest, QuestionHint) || strings.Contains(rest, NotesHint)) && strings.Contains(agent.Squeeze(rest), agent.Squeeze(q))
}

// OptionKey is the digit that picks option k (from 0), and what the
// dialog shows for it; ok is false past the digits.
func OptionKey(k int, label string) (key, shown string, ok bool) {
	if k < 0 || k > 8 {
		return "", "", false
	}
	key = strconv.Itoa(k + 1)
	shown = key + ". " + label
	if r := []rune(shown); len(r) > 24 {
		shown = string(r[:24])
	}
	return key, shown, true
}

// Codex's plan dialog, opened after the Stop of a Plan-mode turn whose
// answer proposed a plan (agents.md §1.4, re-checked on 0.171.0). Its
// "1" switches to Default mode and submits "Implement the plan.".
//
//	  Implement this plan?
//	› 1. Yes, implement this plan          Switch to Default and start coding
//	  2. Yes, clear context and implement  Fresh thread with this plan
//	  3. No, stay in Plan mode             Continue planning with the model
//	  enter select · esc back
const (
	PlanQuestion = "Implement this plan?"
	PlanHint     = "enter select · esc back"
	PlanYes      = "1. Yes, implement this plan"
	PlanNo       = "3. No, stay in Plan mode"
	PlanYesKey   = "1"
	PlanNoKey    = "3"
)

// PlanShown reports whether screen shows the plan dialog.
func PlanShown(screen string) bool {
	return strings.Contains(screen, PlanQuestion) && strings.Contains(screen, PlanHint) &&
		strings.Contains(screen, PlanYes) && strings.Contains(screen, PlanNo)
}
