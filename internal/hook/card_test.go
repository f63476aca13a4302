package hook

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/prompt"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The hook binds a request to the card it posted: the message's id, the
// ids Discord gave its attachments, and the hash of what it drew, so a
// click is later checked against the card as posted.
func TestCardIsBoundToTheMessagePosted(t *testing.T) {
	r := newRelay(t)
	r.store.Bots.Update(context.Background(), "home", func(b *state.Bot) error { b.Instance = "inst1"; return nil })
	cmd := "touch a" + strings.Repeat("; echo padding", 200) // cut on the card, attached whole
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","cwd":"/p","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":%q}}`, cmd)
	done := make(chan struct{})
	go func() { defer close(done); run(t, PreTool, r.root, "home-api", payload) }()
	var id string
	var req state.Request
	deadline := time.Now().Add(10 * time.Second)
	for req.MessageID == "" {
		all, _ := r.store.Requests.List()
		for k, q := range all {
			id, req = k, q
		}
		if time.Now().After(deadline) {
			t.Fatal("no card recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	m, ok := r.srv.Message(req.MessageID)
	if !ok || len(m.Files) != 1 || len(req.CardFiles) != 1 || req.CardHash == "" {
		t.Fatalf("request %+v for message %+v", req, m)
	}
	if _, err := prompt.Answer(context.Background(), r.store.Requests, id, []string{"deny"}, "test", "mcp"); err != nil {
		t.Fatal(err)
	}
	<-done
}
