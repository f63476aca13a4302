package intake

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Each offer names its message by a reference a front end makes a link,
// and says why it was not delivered: its age against catch_up, or what
// the stop left unknown.
func TestOfferTextSaysWhy(t *testing.T) {
	ref := Ref{Server: "home", ChannelID: "10", MessageID: "20"}
	this := chat.MessageRef{ChannelID: "10", MessageID: "20", Label: "this message"}.String()
	cases := map[Verdict]string{
		{}:              "⚠️ " + chat.MessageRef{ChannelID: "10", MessageID: "20", Label: "This message"}.String() + " was sent 20m0s ago, while ccbridge was away: longer ago than `catch_up` (15m0s)",
		{Held: true}:    "⚠️ ccbridge stopped before " + this + " reached Claude, 20m0s ago: longer ago than `catch_up` (15m0s)",
		{Unsure: true}:  "⚠️ ccbridge stopped while typing " + this + " and cannot tell whether Claude received it",
		{Reoffer: true}: "⚠️ ccbridge stopped before " + this + " reached Claude, after Deliver anyway was clicked",
	}
	for v, want := range cases {
		if got := OfferText(ref, v, 20*time.Minute+300*time.Millisecond, 15*time.Minute); !strings.HasPrefix(got, want) {
			t.Errorf("%+v: %q, want %q…", v, got, want)
		}
	}
	if got := NotReadBackText(ref, "Telegram", errors.New("gone")); got != "⚠️ Could not read "+this+" back from Telegram, so it was not delivered: gone. Send it again." {
		t.Errorf("not read back: %q", got)
	}
}

// A refused click is told why; any other error is no refusal.
func TestRefusalOfAClick(t *testing.T) {
	for err, want := range map[error]string{ErrOfferGone: OfferGoneText, ErrOfferUsed: OfferUsedText, fmt.Errorf("use: %w", ErrOfferNotYours): OfferNotYoursText} {
		if got, ok := Refusal(err); !ok || got != want {
			t.Errorf("%v: %q %v", err, got, ok)
		}
	}
	if _, ok := Refusal(errors.New("disk full")); ok {
		t.Error("a failure read as a refusal")
	}
}
