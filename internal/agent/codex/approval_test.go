package codex

import (
	"slices"
	"strings"
	"testing"
)

// The approval dialog as Codex 0.171.0 drew it in tmux (160 columns), with
// the "don't ask again" prefix the model proposed.
const approvalScreen = `› run SCN_P
• Running touch /tmp/TestProbe2444396020/001/out.txt
  Would you like to run the following command?
  Environment: local
  Reason: Create a file outside?
  $ touch /tmp/TestProbe2444396020/001/out.txt
› 1. Yes, proceed (y)
  2. Yes, and don't ask again for commands that start with ` + "`touch`" + ` (p)
  3. No, and tell Codex what to do differently (esc)
  Press enter to confirm or esc to cancel
`

func TestReadApproval(t *testing.T) {
	a, ok := ReadApproval(approvalScreen, "touch /tmp/TestProbe2444396020/001/out.txt")
	if !ok || a.Always != "touch" {
		t.Errorf("got %+v, %v", a, ok)
	}
	// Another command's dialog is not this card's.
	if _, ok := ReadApproval(approvalScreen, "touch /tmp/other"); ok {
		t.Error("read as the dialog of another command")
	}
	// The prefix wraps on a narrow pane; a dialog without the choice
	// offers no Always.
	wrapped := `  Would you like to run the following command?
  $ touch /tmp/a &&
    echo ok
› 1. Yes, proceed (y)
  2. Yes, and don't ask again for commands that start with ` + "`touch" + `
  /tmp/a` + "`" + ` (p)
  3. No, and tell Codex what to do differently (esc)
`
	if a, ok := ReadApproval(wrapped, "touch /tmp/a && echo ok"); !ok || a.Always != "touch /tmp/a" {
		t.Errorf("wrapped: %+v, %v", a, ok)
	}
	noAlways := "  Would you like to run the following command?\n  $ rm x\n› 1. Yes, proceed (y)\n  2. No, and tell Codex what to do differently (esc)\n"
	if a, ok := ReadApproval(noAlways, "rm x"); !ok || a.Always != "" {
		t.Errorf("no Always: %+v, %v", a, ok)
	}
	if _, ok := ReadApproval("› Ask Codex to do anything\n  gpt-fake default · ~/proj\n", "rm x"); ok {
		t.Error("an idle screen read as a dialog")
	}
}

// Codex's question dialog as 0.171.0 drew it in Plan mode.
const questionScreen = `› ask SCN_ASK
  Question 1/1 (1 unanswered)
  Which color do you prefer?
  › 1. Red                The color red
    2. Blue               The color blue
    3. None of the above  Optionally, add details in notes (tab)
  tab to add notes | enter to submit answer | esc to interrupt
`

func TestQuestionShown(t *testing.T) {
	if !QuestionShown(questionScreen, 0, 1, "Which color do you prefer?") {
		t.Error("the question is not read")
	}
	if QuestionShown(questionScreen, 0, 2, "Which color do you prefer?") || QuestionShown(questionScreen, 0, 1, "Which size?") {
		t.Error("another question read as this one")
	}
	if key, shown, ok := OptionKey(1, "Blue"); !ok || key != "2" || shown != "2. Blue" {
		t.Errorf("OptionKey: %q %q %v", key, shown, ok)
	}
	if _, _, ok := OptionKey(-1, "Green"); ok {
		t.Error("an answer that is no option has a key")
	}
}

// The last of several questions, and its notes field, as Codex 0.171.0
// drew them: their hints differ from a single question's, and they are
// still dialogs (nothing is typed into them) and still that question.
func TestLastQuestionOfSeveral(t *testing.T) {
	last := `› ask SCN_ASK
  Question 2/2 (1 unanswered)
  Which size?
  › 1. Small              small
    2. Large              large
    3. None of the above  Optionally, add details in notes (tab)
  tab to add notes | enter to submit all | ←/→ to navigate questions | esc to interrupt
`
	notes := `› ask SCN_ASK
  Question 2/2 (1 unanswered)
  Which size?
    1. Small              small
    2. Large              large
  › 3. None of the above  Optionally, add details in notes (tab)
  › green please
  tab or esc to clear notes | enter to submit all
`
	for name, s := range map[string]string{"last": last, "notes": notes} {
		if !(Codex{}).DialogOpen(s) || (Codex{}).InputBoxShown(s) {
			t.Errorf("%s: not read as a dialog", name)
		}
		if !slices.ContainsFunc(Codex{}.DialogChrome(), func(c string) bool { return strings.Contains(s, c) }) {
			t.Errorf("%s: no chrome for tmux's guard", name)
		}
	}
	if !QuestionShown(last, 1, 2, "Which size?") {
		t.Error("the last question is not read")
	}
}

// A card's command must be the dialog's whole command: `git push` is not
// the dialog of `git push --force origin main`, and a command Codex wraps
// over lines still matches itself, line by line.
func TestReadApprovalExactCommand(t *testing.T) {
	force := "  Would you like to run the following command?\n  $ git push --force origin main\n› 1. Yes, proceed (y)\n" +
		"  2. Yes, and don't ask again for commands that start with `git push` (p)\n  3. No, and tell Codex what to do differently (esc)\n"
	if _, ok := ReadApproval(force, "git push"); ok {
		t.Error("the card of `git push` read the dialog of `git push --force origin main`")
	}
	if a, ok := ReadApproval(force, "git push --force origin main"); !ok || !slices.Equal(a.Lines, []string{"$ git push --force origin main"}) {
		t.Errorf("own dialog: %+v, %v", a, ok)
	}
	long := "cp /tmp/some/long/path/to/a/file.txt /tmp/another/long/path/to/the/copy.txt"
	wrapped := "  Would you like to run the following command?\n  Reason: copy it\n  $ cp /tmp/some/long/path/to/a/file.txt\n" +
		"    /tmp/another/long/path/to/the/\n    copy.txt\n› 1. Yes, proceed (y)\n  3. No, and tell Codex what to do differently (esc)\n"
	a, ok := ReadApproval(wrapped, long)
	if !ok || !slices.Equal(a.Lines, []string{"$ cp /tmp/some/long/path/to/a/file.txt", "/tmp/another/long/path/to/the/", "copy.txt"}) {
		t.Errorf("wrapped: %+v, %v", a, ok)
	}
	if _, ok := ReadApproval(wrapped, "cp /tmp/some/long/path/to/a/file.txt /tmp/another/long/path/to/the/copy"); ok {
		t.Error("a wrapped command's prefix read as the dialog")
	}
}

// Always is refused for a prefix that is only a shell or an interpreter
// (and its flags): Codex would then run any command it wraps, everywhere.
func TestBroadPrefix(t *testing.T) {
	for _, p := range []string{"bash", "sh -c", "/usr/bin/python3", "node -e", "env", "sudo", "zsh -lc", "python"} {
		if !BroadPrefix(p) {
			t.Errorf("%q is not broad", p)
		}
	}
	for _, p := range []string{"touch", "git push", "python3 manage.py", "sudo apt-get", "npm test"} {
		if BroadPrefix(p) {
			t.Errorf("%q is broad", p)
		}
	}
}

// The "don't ask again" choice is read line by line, for tmux to check it
// (and so its prefix) as it presses Always.
func TestReadApprovalAlwaysLines(t *testing.T) {
	wrapped := "  Would you like to run the following command?\n  $ touch /tmp/a && echo ok\n› 1. Yes, proceed (y)\n" +
		"  2. Yes, and don't ask again for commands that start with `touch\n  /tmp/a` (p)\n  3. No, and tell Codex what to do differently (esc)\n"
	a, ok := ReadApproval(wrapped, "touch /tmp/a && echo ok")
	if !ok || !slices.Equal(a.AlwaysLines, []string{"2. Yes, and don't ask again for commands that start with `touch", "/tmp/a` (p)"}) {
		t.Errorf("%+v, %v", a, ok)
	}
}
