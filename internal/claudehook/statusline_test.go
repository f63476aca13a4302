package claudehook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestBridgeSettingsRegisterTheStatusLine(t *testing.T) {
	s := BridgeSettings("/opt/cc bin/ccbridge-hook-stop", "/opt/p/ccbridge-hook-pretool", time.Minute)
	var back struct {
		StatusLine map[string]any `json:"statusLine"`
	}
	if err := json.Unmarshal(s.Inline(), &back); err != nil {
		t.Fatal(err)
	}
	if back.StatusLine["type"] != "command" || back.StatusLine["command"] != "'/opt/cc bin/ccbridge-hook-stop' statusline" {
		t.Errorf("statusLine = %v", back.StatusLine)
	}
	// The user's own settings keep their statusLine: installing the global
	// hooks never adds ccbridge's.
	out, _, err := AddGlobalHooks([]byte(`{"statusLine":{"type":"command","command":"mine.sh"}}`), "/b/ccbridge-hook-stop", "/b/ccbridge-hook-pretool", time.Minute)
	if err != nil || !strings.Contains(string(out), `"mine.sh"`) || strings.Contains(string(out), "statusline") {
		t.Errorf("global settings: %s, %v", out, err)
	}
}
