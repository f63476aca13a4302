package state

import "testing"

// Two bots' keyboards in one person's private chat (one chat id for every
// bot, each bot numbering its own messages) are two records; a group's
// keys stay as they were, so its buttons drawn before still answer.
func TestTelegramDrawnKeysOfPrivateChatsNameTheServer(t *testing.T) {
	if a, b := TelegramDrawnKey("home", "123456789", "7"), TelegramDrawnKey("work", "123456789", "7"); a == b || !validKey(a) || !validKey(b) {
		t.Errorf("private chat keys %q and %q", a, b)
	}
	if got := TelegramDrawnKey("home", "-1001234567890", "7"); got != "m-1001234567890_7" {
		t.Errorf("a group's key changed: %q", got)
	}
}
