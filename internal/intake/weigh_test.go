package intake

import (
	"testing"
	"time"
)

// Catch-up's rules, one message at a time: what is not ccbridge's or was
// handled passes; a channel's history from before its first cursor
// passes; a message typed before a crash is confirmed, typed again or
// offered by what Claude received; older than the age rule is offered,
// never delivered on its own; a clicked Deliver anyway is offered again.
func TestWeigh(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	age := 10 * time.Minute
	young, old := now.Add(-time.Minute), now.Add(-time.Hour)
	for _, c := range []struct {
		name  string
		m     Read
		first bool
		got   Receipt
		want  Verdict
	}{
		{"young", Read{At: young, Wanted: true}, false, ReceiptNone, Verdict{Action: Deliver}},
		{"not wanted", Read{At: young}, false, ReceiptNone, Verdict{Action: Pass}},
		{"delivered", Read{At: young, Wanted: true, Marked: []string{"✅"}}, false, ReceiptNone, Verdict{Action: Pass}},
		{"told", Read{At: young, Wanted: true, Marked: []string{"⚠️"}}, false, ReceiptNone, Verdict{Action: Pass}},
		{"old", Read{At: old, Wanted: true}, false, ReceiptNone, Verdict{Action: Offer}},
		{"old in flight", Read{At: old, Wanted: true, Held: true}, false, ReceiptNone, Verdict{Action: Offer, Held: true}},
		{"old, first start", Read{At: old, Wanted: true}, true, ReceiptNone, Verdict{Action: PassOld}},
		{"young, first start", Read{At: young, Wanted: true}, true, ReceiptNone, Verdict{Action: Deliver}},
		{"typed, received", Read{At: young, Wanted: true, Typed: true}, false, ReceiptSeen, Verdict{Action: Confirm}},
		{"typed, unknown", Read{At: young, Wanted: true, Typed: true}, false, ReceiptUnknown, Verdict{Action: Offer, Unsure: true}},
		{"typed, not received", Read{At: young, Wanted: true, Typed: true}, false, ReceiptNone, Verdict{Action: Deliver}},
		{"typed old, not received", Read{At: old, Wanted: true, Typed: true}, false, ReceiptNone, Verdict{Action: Offer}},
		// The ⚠️ of a clicked offer is the offer's, not a handled mark.
		{"clicked", Read{At: old, Wanted: true, Held: true, Clicked: true, Marked: []string{"⚠️"}}, false, ReceiptNone, Verdict{Action: Offer, Reoffer: true}},
		{"clicked, delivered", Read{At: old, Wanted: true, Held: true, Clicked: true, Marked: []string{"⚠️", "✅"}}, false, ReceiptNone, Verdict{Action: Pass}},
	} {
		asked := false
		got := Weigh(c.m, c.first, now, age, func() Receipt { asked = true; return c.got })
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if asked != (c.m.Typed && got.Action != Pass && got.Action != PassOld) {
			t.Errorf("%s: asked what Claude received: %v", c.name, asked)
		}
	}
}
