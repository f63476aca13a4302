package approval

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// longestPart is the length of the longest piece of secret found in text.
func longestPart(text, secret string) int {
	for n := len(secret); n > 0; n-- {
		for i := 0; i+n <= len(secret); i++ {
			if strings.Contains(text, secret[i:i+n]) {
				return n
			}
		}
	}
	return 0
}

// A secret where a card cuts its text is masked whole: the card is masked
// before it is cut (security-2.md finding 9: 39 of a token's 40
// characters were on the card).
func TestReviewSecretAtTheCut(t *testing.T) {
	tok := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	pad := strings.Repeat("x", 3000)
	worst := 0
	// Move the token across the cut of the code block.
	for shift := 700; shift < 1000; shift += 3 {
		cmd := "echo " + pad[:shift] + " " + tok + " " + pad
		m := Render("r1", permReq("Bash", claudehook.BashInput{Command: cmd}))
		worst = max(worst, longestPart(m.Content, tok))
	}
	// Other texts a card cuts: the description, a path, a closed card's
	// instructions.
	desc := strings.Repeat("d", maxDescription-20) + " " + tok
	m := Render("r1", permReq("Bash", claudehook.BashInput{Command: "ls", Description: desc}))
	worst = max(worst, longestPart(m.Content, tok))
	path := "/tmp/" + strings.Repeat("p", maxPath/2-20) + "/" + tok + "/" + strings.Repeat("q", maxPath)
	m = Render("r1", permReq("Write", claudehook.WriteInput{FilePath: path, Content: "x"}))
	worst = max(worst, longestPart(m.Content, tok))
	req := permReq("Bash", claudehook.BashInput{Command: "ls"})
	if _, err := Apply("r1", &req, Action{Name: "denytext", User: "@o", Fields: map[string]string{"text": strings.Repeat("w", 290) + " " + tok}}); err != nil {
		t.Fatal(err)
	}
	if req.Status != state.RequestDecided {
		t.Fatal("not decided")
	}
	worst = max(worst, longestPart(Render("r1", req).Content, tok))
	if worst > 8 {
		t.Errorf("a card showed %d characters of a %d-character token", worst, len(tok))
	}
}
