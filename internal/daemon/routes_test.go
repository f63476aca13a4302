package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The route table names each server's platform, so that a hook audits a
// card decided on Telegram as Telegram's (issue 27).
func TestRoutesNameEachServersPlatform(t *testing.T) {
	t.Setenv("CCBRIDGE_RELOAD_TOKEN", "tok-0123456789")
	t.Setenv("CCBRIDGE_TG_TOKEN", "123456:tok")
	dir := t.TempDir()
	cfg, err := config.Parse(fmt.Sprintf(reloadTOML, "one", dir) + `
[[servers]]
name = "phone"
platform = "telegram"
token_env = "CCBRIDGE_TG_TOKEN"
chat_id = "-1001234567890"
owner_ids = ["123456789"]
  [[servers.projects]]
  name = "app"
  topic_id = "42"
  path = "` + dir + `"
`)
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRoutes(context.Background(), store, cfg); err != nil {
		t.Fatal(err)
	}
	routes, err := store.Routes.Get(state.RoutesKey)
	if err != nil {
		t.Fatal(err)
	}
	if p := routes.Platforms; p["home"] != "discord" || p["phone"] != "telegram" {
		t.Errorf("platforms = %v, want home discord, phone telegram", p)
	}
}
