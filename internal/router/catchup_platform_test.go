package router

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A Telegram server's catch-up holds its messages to [telegram] catch_up,
// a Discord server's to [discord] catch_up (issue 27).
func TestCatchUpAgeIsThePlatforms(t *testing.T) {
	t.Setenv("TG", "123456:tok")
	cfg, err := config.Parse(fmt.Sprintf(`
[discord]
catch_up = "1h"
[telegram]
catch_up = "2m"
[[servers]]
name = "home"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = [%q]
[[servers]]
name = "phone"
platform = "telegram"
token_env = "TG"
chat_id = "-1001234567890"
owner_ids = ["123456789"]
  [[servers.projects]]
  name = "app"
  topic_id = "42"
  path = %q
`, owner, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := New(ctx, Options{Config: cfg, Store: store, Replier: &fakeReplier{l: &log{}, files: map[string][]byte{}}, Sessions: &fakeSessions{l: &log{}}, Instance: "inst1"})
	t.Cleanup(func() { cancel(); r.Wait() })
	if got := r.laterNotice("phone", ""); got != fmt.Sprintf(laterReached, "this message", 2*time.Minute) {
		t.Errorf("Telegram notice = %q", got)
	}
	if got := r.laterNotice("home", ""); got != fmt.Sprintf(laterReached, "this message", time.Hour) {
		t.Errorf("Discord notice = %q", got)
	}
}
