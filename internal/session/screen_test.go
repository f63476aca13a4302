package session

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// tallScreen is a 50-row pane as Claude 2.1.328 draws it after a short
// conversation: the conversation at the top, a tall blank region padded
// with spaces, then the input box and the footer.
func tallScreen() string {
	pad := strings.Repeat(" ", 100)
	var b strings.Builder
	b.WriteString(" ▐▛███▛█   Claude Code v2.1.328\n▝▜██████▀  Opus 5.5 · API Usage Billing\n\n")
	b.WriteString("❯ hello there" + pad + "\n\n● ok: hello there\n\n✻ Worked for 0s · done 12:47 PM\n")
	for range 36 {
		b.WriteString(pad + "\n")
	}
	b.WriteString(strings.Repeat("─", 100) + "\n❯ " + pad + "\n" + strings.Repeat("─", 100) + "\n  ⏸ manual mode on · ? for shortcuts\n")
	return b.String()
}

func TestCondenseKeepsTheConversationAndTheBox(t *testing.T) {
	got := Condense(tallScreen(), 40, 1900)
	// The old "last 40 lines" showed only blanks, the box and the footer.
	if !strings.Contains(got, "● ok: hello there") || !strings.Contains(got, "❯ hello there") {
		t.Fatalf("the last reply is missing:\n%s", got)
	}
	if strings.Contains(got, "\n\n\n") || strings.HasPrefix(got, "\n") || strings.Contains(got, "  \n") {
		t.Fatalf("blank runs or trailing spaces left:\n%q", got)
	}
	if !strings.HasSuffix(got, "❯\n"+strings.Repeat("─", 100)+"\n  ⏸ manual mode on · ? for shortcuts") {
		t.Fatalf("the input box and footer are not at the end:\n%s", got)
	}
}

func TestCondenseCutsFromTheTop(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(strings.Repeat("x", 60) + " line " + string(rune('a'+i%26)) + "\n")
	}
	b.WriteString(bashDialog)
	got := Condense(b.String(), 0, 1900)
	if n := utf8.RuneCountInString(got); n > 1900 {
		t.Fatalf("%d characters, want at most 1900", n)
	}
	if !strings.HasPrefix(got, "…\n") || !strings.HasSuffix(got, "Esc to cancel · Tab to amend") || !strings.Contains(got, "Do you want to proceed?") {
		t.Fatalf("the dialog or the cut notice is missing:\n%s", got)
	}
	if got := Condense(strings.Repeat("a", 5000), 0, 100); utf8.RuneCountInString(got) > 100 {
		t.Fatalf("one long line: %d characters", utf8.RuneCountInString(got))
	}
	if got := Condense(strings.Repeat("a\n", 100), 10, 1900); strings.Count(got, "\n") != 9 || !strings.HasPrefix(got, "…") {
		t.Fatalf("line limit: %q", got)
	}
}

func TestInputBoxReading(t *testing.T) {
	box := func(text string) string { return setBox(readyScreen, text) }
	for _, c := range []struct {
		screen, text string
		want         bool
	}{
		{box("hello there"), "hello there", true},
		{box("first line\n  second line"), "first line\nsecond line", true},
		{box("first line"), "first line\nsecond line", false},
		{box("[Pasted text #1 +49 lines]"), strings.Repeat("x\n", 50), true},
		{box("wrapped lon") + "\n", "wrapped long line", false},
		{strings.Replace(box("tab  in text"), "❯ ", "❯ ", 1), "tab\tin text", true},
		{box(""), "hello", false},
		{box("something else"), "hello", false},
		{bashDialog, "hello", false},
		{strings.Replace(readyScreen, "❯ ", "! ls -la", 1), "!ls -la", true},
	} {
		if got := InputHolds(c.screen, c.text); got != c.want {
			t.Errorf("InputHolds(%q, %q) = %v", c.screen, c.text, got)
		}
	}
	// Claude wraps long input inside the box.
	wrapped := strings.Replace(readyScreen, "❯ \n", "❯ a very long message that Claude wraps in\n  its input box\n", 1)
	if !InputHolds(wrapped, "a very long message that Claude wraps in its input box and more") {
		t.Error("wrapped input not recognised")
	}
	if InputBoxShown(bashDialog) || !InputBoxShown(readyScreen) || InputBoxShown(switchModel) {
		t.Error("InputBoxShown misread a screen")
	}
	for screen, want := range map[string]string{
		readyScreen: "default",
		strings.Replace(readyScreen, "⏸ manual mode on · ? for shortcuts", "⏵⏵ auto mode on (shift+tab to cycle)", 1): "auto",
		strings.Replace(readyScreen, "⏸ manual mode on", "⏸ plan mode on", 1):                                         "plan",
		bashDialog: "",
	} {
		if got := ModeShown(screen); got != want {
			t.Errorf("ModeShown = %q, want %q in\n%s", got, want, screen)
		}
	}
}

// The dialog's text is what a key would answer: another dialog differs,
// the conversation above it does not count, and no dialog is "".
func TestDialogText(t *testing.T) {
	rule := strings.Repeat("─", 60)
	dialog := func(above, command string) string {
		return "● " + above + "\n\n" + rule + "\n Bash command\n\n   " + command + "\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. No   \n\n Esc to cancel · Tab to amend\n"
	}
	a := DialogText(dialog("working…", "ls"))
	if !strings.HasPrefix(a, rule+"\n Bash command") || !strings.Contains(a, "ls") || strings.Contains(a, "working") || strings.Contains(a, "No   ") {
		t.Fatalf("dialog text = %q", a)
	}
	if b := DialogText(dialog("still working…", "ls")); b != a {
		t.Fatalf("the conversation above changed the dialog text: %q", b)
	}
	if b := DialogText(dialog("working…", "curl x | sh")); b == a {
		t.Fatal("two dialogs give the same text")
	}
	if moved := DialogText(strings.Replace(strings.Replace(dialog("working…", "ls"), "❯ 1", "  1", 1), "  2. No", "❯ 2. No", 1)); moved == a {
		t.Fatal("the highlighted option does not count")
	}
	if got := DialogText(bashDialog); got != strings.TrimRight(bashDialog, "\n") {
		t.Fatalf("a dialog without a rule above: %q", got)
	}
	if got := DialogText(readyScreen); got != "" {
		t.Fatalf("no dialog: %q", got)
	}
}
