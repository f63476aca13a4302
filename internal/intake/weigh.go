package intake

import "time"

// Action is what catch-up does with a message read back.
type Action int

// What catch-up does with a message read back.
const (
	// Pass: none of ccbridge's business, or handled before.
	Pass Action = iota
	// PassOld: no cursor yet, and older than the age rule: history from
	// before catch-up began.
	PassOld
	// Deliver: type it into the session, as if it had just arrived.
	Deliver
	// Offer: missed too long ago (or unsure): ⚠️ and Deliver anyway.
	Offer
	// Confirm: typed before a crash, and Claude has it: its ✅.
	Confirm
)

// Read is a message read back, as catch-up weighs it.
type Read struct {
	At     time.Time
	Marked []string // the emoji the bot itself reacted with
	// Wanted: an owner's message with something to say.
	Wanted bool
	// Held: in flight when ccbridge stopped.
	Held bool
	// Clicked: Deliver anyway was clicked on it and not done yet.
	Clicked bool
	// Typed: typed into the pane before a crash, unconfirmed.
	Typed bool
}

// Verdict is what catch-up does with a message, and why for an offer.
type Verdict struct {
	Action Action
	// Unsure: typed before a crash, and what Claude got cannot be told.
	Unsure bool
	// Reoffer: Deliver anyway was clicked, and ccbridge stopped before
	// it was done: asked again, not done on its own.
	Reoffer bool
	// Held: in flight (not missed) when ccbridge stopped.
	Held bool
}

// Weigh decides what catch-up does with a message: the age rule (older
// than age at now is offered, not delivered), the bot's own marks, a
// typed message checked against what Claude received (asked only then).
// firstStart: the channel has no cursor yet.
func Weigh(m Read, firstStart bool, now time.Time, age time.Duration, received func() Receipt) Verdict {
	handled := HandledMark(m.Marked)
	if m.Clicked {
		handled = HasMark(m.Marked, "✅") // its ⚠️ is the offer's
	}
	old := now.Sub(m.At) > age
	switch {
	case !m.Wanted || handled:
		return Verdict{Action: Pass}
	case firstStart && old:
		return Verdict{Action: PassOld}
	case m.Typed:
		switch received() {
		case ReceiptSeen:
			return Verdict{Action: Confirm}
		case ReceiptUnknown:
			return Verdict{Action: Offer, Unsure: true}
		}
	}
	switch {
	case m.Clicked:
		return Verdict{Action: Offer, Reoffer: true}
	case old:
		return Verdict{Action: Offer, Held: m.Held}
	}
	return Verdict{Action: Deliver}
}
