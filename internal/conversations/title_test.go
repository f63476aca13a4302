package conversations

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// A thread named after a first prompt holding a token at its cut shows
// no part of it: the name is masked before it is cut.
func TestThreadTitleMasksBeforeTheCut(t *testing.T) {
	tok := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	for pad := 60; pad < chat.MaxThreadName; pad += 4 {
		name := ThreadTitle("", strings.Repeat("w", pad)+" "+tok+" and more", "x")
		if strings.Contains(name, "ghp_A1b2") {
			t.Fatalf("the token's head is in the thread name: %q", name)
		}
	}
}

// A listing's controls act for ten minutes, then say the listing is old;
// a control from an older ccbridge's listing, without the time, never acts.
func TestListingGoesStale(t *testing.T) {
	listed := time.Now()
	stamp := strconv.FormatInt(listed.Unix(), 36)
	if why := Stale(stamp, listed.Add(9*time.Minute)); why != "" {
		t.Fatalf("a nine-minute-old listing: %q", why)
	}
	for _, s := range []string{strconv.FormatInt(listed.Add(-11*time.Minute).Unix(), 36), strconv.FormatInt(listed.Add(11*time.Minute).Unix(), 36), "not a time"} {
		if Stale(s, listed) == "" {
			t.Errorf("stamp %q acts", s)
		}
	}
}
