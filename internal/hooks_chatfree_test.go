package internal_test

import (
	"strings"
	"testing"
)

// TestHooksLinkNoChatLibrary keeps the hooks the same size whatever the
// front ends: they hand every post to the daemon over its socket
// (internal/relay), so no chat client, HTTP or TLS stack is linked into
// them, and none costs start-up time on the not-my-session path.
func TestHooksLinkNoChatLibrary(t *testing.T) {
	forbidden := []string{"github.com/bwmarrin/discordgo", "github.com/gorilla/websocket", "net/http", "crypto/tls",
		mod + "internal/discord", mod + "internal/telegram"}
	for _, d := range list(t, "-deps", "./cmd/hook-stop", "./cmd/hook-pretool") {
		for _, f := range forbidden {
			if d.ImportPath == f || strings.HasPrefix(d.ImportPath, f+"/") {
				t.Errorf("the hooks link %s", d.ImportPath)
			}
		}
	}
}
