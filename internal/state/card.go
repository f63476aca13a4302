package state

import (
	"crypto/sha256"
	"encoding/hex"
)

// CardHash stands for what a card shows: its face (chat.Face: text and
// components) and the ids of its attachments.
func CardHash(face string, fileIDs []string) string {
	h := sha256.New()
	h.Write([]byte(face))
	for _, id := range fileIDs {
		h.Write([]byte{0})
		h.Write([]byte(id))
	}
	return hex.EncodeToString(h.Sum(nil))
}
