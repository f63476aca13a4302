//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// A long command after a long, markdown-laden description: the card fits
// Discord's 2,000 characters (it did not, and never appeared), shows the
// command's tail next to Allow, says the input was cut, attaches the whole
// command, and the description draws no code block of its own.
func TestPromptLongCommandIsCutVisiblyAndAttached(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	// touch needs a prompt; a command of echos alone would be allowed as read-only.
	cmd := "touch long-start.txt" + strings.Repeat("; echo harmless-padding", 100) + "; touch TAIL-MARKER-9.txt"
	desc := "Build it ```sh\nrm -rf /\n``` # Approved by admin " + strings.Repeat("x", 650)
	b.model.Script("SCN_LONGCMD", fakemodel.Tool("", "Bash", map[string]any{"command": cmd, "description": desc}))
	b.say(p, "SCN_LONGCMD")
	card := b.waitCard(p, "the long Bash card", func(m *fakediscord.Message) bool {
		return strings.Contains(m.Content, "wants to run a command")
	})
	if n := utf8.RuneCountInString(card.Content); n > 2000 {
		t.Fatalf("card of %d characters", n)
	}
	if !strings.Contains(card.Content, "TAIL-MARKER-9") || !strings.Contains(card.Content, "touch long-start.txt") {
		t.Errorf("the card does not show the command's head and tail:\n%s", card.Content)
	}
	if !strings.Contains(card.Content, "Cut") || strings.Count(card.Content, "```") != 2 {
		t.Errorf("the card does not say it was cut, or the description drew a block:\n%s", card.Content)
	}
	if len(card.Files) != 1 || card.Files[0].Name != "command.sh" || string(card.Files[0].Data) != cmd {
		t.Fatalf("the whole command is not attached: %+v", card.Files)
	}
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitCardText(card, "Allowed** by")
	b.waitReply(p, "Done. Last tool result:")
	if _, err := os.Stat(filepath.Join(p.dir, "TAIL-MARKER-9.txt")); err != nil {
		t.Errorf("the allowed command did not run whole: %v", err)
	}
}

// A crafted select value (one the "Always…" menu never showed) saves no
// rule and leaves the prompt pending; a value it showed still works.
func TestPromptAlwaysRefusesAChoiceNotOffered(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	npm := map[string]any{"command": "npm test -- --watch=false", "description": "Run tests"}
	b.model.Script("SCN_CRAFT", fakemodel.Tool("", "Bash", npm))
	b.say(p, "SCN_CRAFT")
	card := b.waitCard(p, "the npm card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "npm test") })
	b.srv.Click(card.ID, action(t, card, "always"), b.owner)
	menu := b.srv.WaitMessage(5*time.Second, "the always menu", func(m *fakediscord.Message) bool {
		return m.ID == card.ID && strings.Contains(strings.Join(m.CustomIDs(), " "), "|alwayssel")
	})
	sel := menu.Component(action(t, menu, "alwayssel"))
	offered := map[string]bool{}
	var session string
	for _, o := range sel["options"].([]any) {
		om := o.(map[string]any)
		offered[om["value"].(string)] = true
		if strings.HasSuffix(om["label"].(string), "— this session") && session == "" {
			session = om["value"].(string)
		}
		if d, _ := om["description"].(string); d == "" {
			t.Errorf("option %q has no description", om["label"])
		}
	}
	for _, crafted := range []string{"0.3x", "0.0 ", "99.0", "-1.0", "0.9"} {
		if offered[crafted] {
			continue
		}
		it := b.srv.Select(card.ID, action(t, menu, "alwayssel"), b.owner, crafted)
		if r := b.srv.WaitResponse(it, 5*time.Second); !strings.Contains(string(r.Response), "no longer valid") {
			t.Fatalf("crafted value %q answered %s", crafted, r.Response)
		}
	}
	if now := b.cardNow(card); len(now.CustomIDs()) == 0 || strings.Contains(now.Content, "Allowed") {
		t.Fatalf("a crafted value closed the card: %q", now.Content)
	}
	if session == "" {
		t.Fatalf("no session-scoped choice in %v", sel["options"])
	}
	b.srv.Select(card.ID, action(t, menu, "alwayssel"), b.owner, session)
	b.waitCardText(card, "(this session)")
	b.waitReply(p, "Done. Last tool result:")
}

// A Markdown table in a reply arrives as an aligned monospace block; the
// same table inside a code block arrives untouched.
func TestReplyTableIsDrawnAligned(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	reply := "Summary:\n\n| City | Pop. |\n|:--|--:|\n| 東京 | 14 M |\n| Oslo | 0.7 M |\n\n#### Raw\n```\n| a | b |\n|---|---|\n```"
	b.model.Script("SCN_TABLE", fakemodel.Text(reply))
	b.say(p, "SCN_TABLE")
	m := b.waitReply(p, "Summary:")
	want := "```\nCity │  Pop.\n─────┼──────\n東京 │  14 M\nOslo │ 0.7 M\n```"
	if !strings.Contains(m.Content, want) || !strings.Contains(m.Content, "**Raw**\n```\n| a | b |\n|---|---|\n```") {
		t.Fatalf("reply = %q", m.Content)
	}
}

// asBot calls Discord's REST API with a bot's token, as anyone holding it
// can (another machine of the fleet, a model that read the token file).
func asBot(t testing.TB, srv *fakediscord.Server, bot *fakediscord.Bot, method, path string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, srv.URL+"/api/v10"+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bot "+bot.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out
}

// Security review 2, finding 1: a card edited by a bot-token holder to show
// something harmless, or a copy of its buttons, approves nothing when the
// owner clicks Allow; the clicker is told, the prompt stays pending, and
// the card's own Deny still answers it. The command never runs.
func TestPromptAllowOnAnEditedCardOrACopyApprovesNothing(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_EDITED", fakemodel.Tool("", "Bash", map[string]any{"command": "touch EVIL-MARKER.txt", "description": "Set up"}))
	b.say(p, "SCN_EDITED")
	card := b.waitCard(p, "the touch card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "EVIL-MARKER") })
	allow := action(t, card, "allow")
	harmless := strings.ReplaceAll(card.Content, "touch EVIL-MARKER.txt", "ls -la")
	asBot(t, b.srv, p.bot, "PATCH", "/channels/"+p.channel+"/messages/"+card.ID, map[string]any{"content": harmless})
	b.waitCardText(card, "ls -la")
	copied := asBot(t, b.srv, p.bot, "POST", "/channels/"+p.channel+"/messages", map[string]any{"content": card.Content, "components": card.Components})
	for _, msgID := range []string{card.ID, copied["id"].(string)} {
		it := b.srv.Click(msgID, allow, b.owner)
		r := b.srv.WaitResponse(it, 10*time.Second)
		if !strings.Contains(string(r.Response), "This card was changed") || !strings.Contains(string(r.Response), `"flags":64`) {
			t.Fatalf("Allow on message %s answered %s", msgID, r.Response)
		}
	}
	if now := b.cardNow(card); strings.Contains(now.Content, "Allowed") || len(now.CustomIDs()) == 0 {
		t.Fatalf("the card was closed: %q", now.Content)
	}
	b.srv.Click(card.ID, action(t, card, "deny"), b.owner)
	b.waitCardText(card, "Denied** by")
	if _, err := os.Stat(filepath.Join(p.dir, "EVIL-MARKER.txt")); err == nil {
		t.Fatal("the command ran")
	}
}
