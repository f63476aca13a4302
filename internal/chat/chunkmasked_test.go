package chat

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A mask longer than the secret it hides cannot push a chunk over the
// poster's limit, whatever the limit (Discord's 2,000, Telegram's 4,096).
func TestChunkMaskedFitsTheLimitAfterMasking(t *testing.T) {
	grow := func(s string) string { return strings.ReplaceAll(s, "pw", "[a much longer mask]") }
	text := strings.Repeat("pw pw pw word\n", 400)
	for _, limit := range []int{300, Limit, 4096} {
		chunks := ChunkMasked(text, limit, grow)
		if len(chunks) < 2 {
			t.Fatalf("limit %d: %d chunks", limit, len(chunks))
		}
		total := 0
		for _, c := range chunks {
			if n := utf8.RuneCountInString(c); n > limit || strings.Contains(c, "pw") || grow(c) != c {
				t.Errorf("limit %d: chunk of %d characters, masked %v", limit, n, !strings.Contains(c, "pw"))
			}
			total += strings.Count(c, "[a much longer mask]")
		}
		if total != 1200 {
			t.Errorf("limit %d: %d masks, want 1200", limit, total)
		}
	}
}
