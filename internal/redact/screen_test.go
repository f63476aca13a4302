package redact

import (
	"strings"
	"testing"
)

// wrap lays text out as Claude Code's TUI does: cut at width, each screen
// line indented (the first after a marker), inside a box when boxed.
func wrap(text string, width int, first, indent string, boxed bool) string {
	var lines []string
	for len(text) > 0 {
		n := min(width, len(text))
		lines = append(lines, text[:n])
		text = text[n:]
	}
	for i, l := range lines {
		p := indent
		if i == 0 {
			p = first
		}
		l = p + l
		if boxed {
			l = "│ " + l + strings.Repeat(" ", width+len(indent)-len([]rune(l))+2) + " │"
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

// A JWT that the TUI wrapped over three lines is masked on all of them
// (security-2.md finding 9: its payload tail and signature were posted).
func TestReviewWrappedJWT(t *testing.T) {
	screen := "● Bash(curl -s https://api.example.com/login)\n" +
		wrap("{\"token\":\""+jwt+"\"}", 60, "  ⎿  ", "     ", false) +
		"\n\n────────────────\n❯ \n────────────────"
	got := Screen(screen)
	for _, part := range []string{"eyJzdWIiOiIxMjM0", "IiwiaWF0IjoxNTE2", "SflKxwRJSMeKKF2QT4fw", "V_adQssw5c", "MjM5MDIyfQ"} {
		if strings.Contains(got, part) {
			t.Errorf("a piece of the JWT is left (%q):\n%s", part, got)
		}
	}
	if !strings.Contains(got, "● Bash(curl -s https://api.example.com/login)") || !strings.Contains(got, "❯ ") {
		t.Errorf("the rest of the screen is gone:\n%s", got)
	}
}

func TestScreenMasksATokenWrappedInABox(t *testing.T) {
	tok := "ghp_" + rep("A1b2C3d4E5", 36)
	screen := wrap("export GH_TOKEN="+tok+" && gh auth status", 24, "", "", true)
	got := Screen(screen)
	if strings.Contains(got, tok[:10]) || strings.Contains(got, tok[len(tok)-10:]) || strings.Contains(got, "A1b2C3d4E5A1") {
		t.Errorf("the token is left:\n%s", got)
	}
	if !strings.Contains(got, "&& gh auth stat") {
		t.Errorf("the text after the token is gone:\n%s", got)
	}
}

// A screen of ordinary wrapped prose and code is left as it is.
func TestScreenLeavesOrdinaryText(t *testing.T) {
	screen := "● I updated internal/config/validate.go so that token_file is checked\n" +
		"  before the bot starts, and ran the tests: all pass.\n\n" +
		"  ⎿  ok  github.com/ccbridge/ccbridge/internal/config  0.012s\n" +
		"│ password := os.Getenv(\"DB_PASSWORD\")                │\n" +
		"│ if token == \"\" { return errNoToken }                │\n" +
		"\n────────────────\n❯ \n────────────────\n  ⏵⏵ accept edits on (shift+tab to cycle)"
	if got := Screen(screen); got != screen {
		t.Errorf("changed:\n%s\nwant\n%s", got, screen)
	}
}

func BenchmarkScreen(b *testing.B) {
	var sb strings.Builder
	for range 40 {
		sb.WriteString("  Here is the plan: update internal/config/validate.go so that token_file is checked.\n")
	}
	screen := sb.String()
	for b.Loop() {
		Screen(screen)
	}
}

// The poster masks what /screen returns again: that changes nothing, so
// the screen measured for Discord's limit stays within it.
func TestScreenThenStringIsANoOp(t *testing.T) {
	for _, c := range append(reviewCorpus, struct{ name, text, secret string }{"JWT", "token %s", jwt}) {
		text := strings.Replace(c.text, "%s", c.secret, 1)
		for _, width := range []int{13, 30, 60} {
			once := Screen(wrap(text, width, "  ⎿  ", "     ", width == 30))
			if twice := String(once); twice != once {
				t.Errorf("%s at %d: masking again changed it:\n%s\n%s", c.name, width, once, twice)
			}
			if again := Screen(once); again != once {
				t.Errorf("%s at %d: Screen again changed it:\n%s\n%s", c.name, width, once, again)
			}
		}
	}
}

// A credentials file shown by `cat` in a narrow pane: the INI value wraps
// onto the next line, and both of its parts are masked; the line after
// it is not.
func TestScreenMasksAWrappedINIValue(t *testing.T) {
	secret := "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	screen := "● Bash(cat ~/.aws/credentials)\n" +
		"  ⎿  [default]\n" +
		wrap("aws_secret_access_key = "+secret, 32, "     ", "     ", false) + "\n" +
		"     region = eu-west-1\n"
	got := Screen(screen)
	if strings.Contains(got, secret[:8]) || strings.Contains(got, secret[len(secret)-12:]) {
		t.Errorf("part of the secret is left:\n%s", got)
	}
	if !strings.Contains(got, "region = eu-west-1") || !strings.Contains(got, "aws_secret_access_key = ") {
		t.Errorf("too much masked:\n%s", got)
	}
}
