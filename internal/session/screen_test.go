package session

import (
	"github.com/ccbridge/ccbridge/internal/tmux"

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

// guardAllows is what tmux decides for a guard over a visible screen
// (see tmux.Guard: each term is searched on the screen's lines).
func guardAllows(g tmux.Guard, screen string) bool {
	for _, w := range g.Without {
		if strings.Contains(screen, w) {
			return false
		}
	}
	for _, w := range g.With {
		if !strings.Contains(screen, w) {
			return false
		}
	}
	return true
}

// Claude's replies are free text: one that says a dialog's words above the
// input box is no dialog (fidelity-3 B1). Real idle screens of 2.1.328
// whose last reply holds every marker (reply-markers), the folder trust's
// "Quick safety check:" (reply-safety) or a closing "Do you want to
// proceed?" (reply-proceed).
func TestRepliesSayingDialogWordsAreNoDialog(t *testing.T) {
	for _, file := range []string{"reply-safety-2.1.328.txt", "reply-proceed-2.1.328.txt", "reply-markers-2.1.328.txt"} {
		screen := readScreen(t, file)
		if DialogOpen(screen) || !InputReady(screen) || !InputBoxShown(screen) || DialogText(screen) != "" {
			t.Errorf("%s: DialogOpen=%v InputReady=%v InputBoxShown=%v DialogText=%q", file,
				DialogOpen(screen), InputReady(screen), InputBoxShown(screen), DialogText(screen))
		}
		if _, ok := ParseDialog(screen); ok {
			t.Errorf("%s: a dialog parsed", file)
		}
		if got := ModeShown(screen); got != "default" {
			t.Errorf("%s: mode %q", file, got)
		}
	}
	// tmux's guard keeps only the dialogs' own chrome: these replies pass.
	for _, file := range []string{"reply-safety-2.1.328.txt", "reply-proceed-2.1.328.txt"} {
		if !guardAllows(inputGuard, readScreen(t, file)) {
			t.Errorf("%s: the paste guard refuses an idle screen", file)
		}
	}
}

// Real dialogs stay dialogs, with the conversation above them saying the
// same words or not: permission (Bash, Write), question, plan, "Switch
// model?", folder trust, the auto-mode nudge and WebFetch's (no hint line
// under its choices). tmux's guard refuses each.
func TestRealDialogsAreDialogs(t *testing.T) {
	for _, file := range []string{"bash-after-markers-2.1.328.txt", "write-2.1.328.txt", "ask-2.1.328.txt", "plan-2.1.328.txt",
		"switch-model-2.1.328.txt", "trust-2.1.328.txt", "nudge-2.1.328.txt", "fetch-2.1.328.txt"} {
		screen := readScreen(t, file)
		if !DialogOpen(screen) || InputReady(screen) || InputBoxShown(screen) || DialogText(screen) == "" || InputHolds(screen, "x") {
			t.Errorf("%s: DialogOpen=%v InputReady=%v InputBoxShown=%v", file, DialogOpen(screen), InputReady(screen), InputBoxShown(screen))
		}
		if guardAllows(inputGuard, screen) {
			t.Errorf("%s: the paste guard lets a key into the dialog", file)
		}
	}
	// The dialog's text is the dialog's, not the reply above it that
	// says "Quick safety check: Do you want to proceed?".
	text := DialogText(readScreen(t, "bash-after-markers-2.1.328.txt"))
	if !strings.Contains(text, "touch touched.txt") || strings.Contains(text, "Quick safety check") || strings.Contains(text, "CAP_") {
		t.Errorf("dialog text:\n%s", text)
	}
	// The plan's text and its question are both the dialog's.
	if text := DialogText(readScreen(t, "plan-2.1.328.txt")); !strings.Contains(text, "Step one: create a.txt") || !strings.Contains(text, "Would you like to proceed?") {
		t.Errorf("plan dialog text:\n%s", text)
	}
}

// A reply cannot draw an input box over a real dialog: rules and a ❯ line
// in the conversation above a permission dialog leave it a dialog.
func TestAReplyDrawingAnInputBoxAboveADialogIsNoInputBox(t *testing.T) {
	screen := readScreen(t, "bash-after-markers-2.1.328.txt")
	rule := strings.Repeat("─", 60)
	fake := strings.Replace(screen, "● Quick safety check: Do you want to proceed?", "  "+rule+"\n  ❯ \n  "+rule+"\n  ⏸ manual mode on · ? for shortcuts", 1)
	if fake == screen {
		t.Fatal("the capture changed")
	}
	if !DialogOpen(fake) || InputBoxShown(fake) || InputReady(fake) || InputHolds(fake, "") || InputText(fake) != "" {
		t.Errorf("a drawn box hid the dialog: DialogOpen=%v InputBoxShown=%v InputReady=%v", DialogOpen(fake), InputBoxShown(fake), InputReady(fake))
	}
}

// Claude's diff panel (at 110 columns and more) draws its borders to the
// right of the footer: the box is still the box.
func TestABorderBesideTheFooterLeavesTheBox(t *testing.T) {
	screen := readScreen(t, "reply-safety-2.1.328.txt")
	footer := "  ⏸ manual mode on · ? for shortcuts · ← for agents"
	panel := strings.Replace(screen, footer, footer+"   └────────────┘", 1)
	if panel == screen || !InputBoxShown(panel) || DialogOpen(panel) || ModeShown(panel) != "default" {
		t.Fatalf("a border beside the footer hid the box:\n%s", panel)
	}
}

// "esc to interrupt" counts where Claude draws it, in the footer under the
// input box, never in a reply above it (fidelity-3 B1's rule, for the
// busy mark as for dialogs): a reply that names the key leaves the session
// idle and ready.
func TestAReplySayingEscToInterruptIsNotBusy(t *testing.T) {
	idle := readScreen(t, "reply-safety-2.1.328.txt")
	said := strings.Replace(idle, "Quick safety check: the tests pass and nothing else changed.", "Press esc to interrupt a turn; the tests pass.", 1)
	if said == idle {
		t.Fatal("the capture changed")
	}
	if Busy(said) || !InputReady(said) {
		t.Errorf("a reply naming the key: Busy=%v InputReady=%v", Busy(said), InputReady(said))
	}
	busy := strings.Replace(idle, "⏸ manual mode on · ? for shortcuts", "⏸ manual mode on · esc to interrupt", 1)
	if !Busy(busy) || InputReady(busy) {
		t.Errorf("a running turn's footer: Busy=%v InputReady=%v", Busy(busy), InputReady(busy))
	}
}
