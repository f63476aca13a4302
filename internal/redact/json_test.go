package redact

import "testing"

// Walk masks every string of a decoded JSON value, keys' values nested in
// arrays and objects included, and a Telegram bot token by its format.
func TestWalkMasksNestedStringsAndTelegramTokens(t *testing.T) {
	tg := "7000000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"
	v, changed := Walk(map[string]any{"text": "bot " + tg, "rows": []any{map[string]any{"label": "fine"}}, "n": 3.0})
	m := v.(map[string]any)
	if !changed || m["text"] != "bot [redacted Telegram bot token]" || m["rows"].([]any)[0].(map[string]any)["label"] != "fine" {
		t.Fatalf("walked: %v (changed %v)", v, changed)
	}
	if _, changed := Walk([]any{"nothing here", 1.0}); changed {
		t.Fatal("a clean value was reported changed")
	}
}
