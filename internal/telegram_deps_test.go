package internal_test

import (
	"strings"
	"testing"
)

// TestTelegramFrontEndApart: the Telegram front end reaches the core (chat,
// state) and no other front end: no Discord package, no router, no MCP,
// and no third-party Telegram library (net/http only).
func TestTelegramFrontEndApart(t *testing.T) {
	banned := []string{mod + "internal/discord", mod + "internal/gateway", mod + "internal/router", mod + "internal/panel", mod + "internal/mcp"}
	for _, d := range list(t, "-deps", "./internal/telegram") {
		for _, b := range banned {
			if d.ImportPath == b {
				t.Errorf("internal/telegram depends on %s", b)
			}
		}
		if strings.Contains(strings.ToLower(d.ImportPath), "telegram") && !strings.HasPrefix(d.ImportPath, mod) || strings.Contains(d.ImportPath, "discordgo") {
			t.Errorf("internal/telegram depends on %s", d.ImportPath)
		}
	}
}
