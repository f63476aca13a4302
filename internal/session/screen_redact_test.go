package session

import (
	"context"
	"strings"
	"testing"
)

// /screen masks a JWT that Claude Code's TUI wrapped over three lines,
// before the screen is cut to its budget (security-2.md finding 9).
func TestScreenMasksAWrappedSecret(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	var lines []string
	for rest := "TOKEN=" + jwt; rest != ""; {
		n := min(60, len(rest))
		lines = append(lines, "     "+rest[:n])
		rest = rest[n:]
	}
	panes.mu.Lock()
	panes.screen = "● Bash(cat .env)\n" + strings.Join(lines, "\n") + "\n\n" + readyScreen
	panes.mu.Unlock()
	screen, err := m.Screen(ctx, target.Key, 40)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"eyJzdWIiOiIx", "IiwiaWF0Ijox", "SflKxwRJSMeKKF2QT4fw", "V_adQssw5c"} {
		if strings.Contains(screen, part) {
			t.Fatalf("a piece of the JWT (%q) is on /screen:\n%s", part, screen)
		}
	}
}
