package daemon

import (
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

type limitedPoster struct {
	chat.Poster
	limit int
}

func (p limitedPoster) Limit() int { return p.limit }

// The router learns each server's limit from its front end's poster
// (Telegram 4,096, Discord 2,000), none for a server with no bot.
func TestReplierLimitIsThePostersOwn(t *testing.T) {
	r := &replier{posters: map[string]chat.Poster{"phone": limitedPoster{limit: 4096}, "home": limitedPoster{limit: chat.Limit}}}
	for server, want := range map[string]int{"phone": 4096, "home": chat.Limit, "gone": 0} {
		if got := r.Limit(server); got != want {
			t.Errorf("Limit(%q) = %d, want %d", server, got, want)
		}
	}
}
