package intake

import (
	"errors"
	"fmt"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// What a Deliver anyway offer says, whatever the front end: the message it
// is about is a chat.MessageRef, which each front end makes a link.

// DeliverLabel is the offer's button.
const DeliverLabel = "Deliver anyway"

// What a Deliver anyway click that changes nothing is told.
const (
	OfferGoneText     = "This offer is no longer open (it expired after the prompt timeout). Send the message again."
	OfferUsedText     = "This message was delivered already; nothing was done."
	OfferNotYoursText = "Only the person who sent this message can deliver it."
	NotAProjectText   = "This channel is no longer one of ccbridge's projects; nothing was delivered."
)

// Refusal is what a click is told when UseOffer refused it with err, and
// whether err is one of those refusals (another error is a failure).
func Refusal(err error) (string, bool) {
	switch {
	case errors.Is(err, ErrOfferGone):
		return OfferGoneText, true
	case errors.Is(err, ErrOfferUsed):
		return OfferUsedText, true
	case errors.Is(err, ErrOfferNotYours):
		return OfferNotYoursText, true
	}
	return "", false
}

// this names the message ref is about in an offer's text.
func this(ref Ref, label string) chat.MessageRef {
	return chat.MessageRef{ChannelID: ref.ChannelID, MessageID: ref.MessageID, Label: label}
}

// OfferText says why catch-up offered ref's message rather than delivering
// it (v, Weigh's verdict): sent age ago, longer than the catch-up age.
func OfferText(ref Ref, v Verdict, age, catchUp time.Duration) string {
	age = age.Round(time.Second)
	switch {
	case v.Unsure:
		return fmt.Sprintf("⚠️ ccbridge stopped while typing %s and cannot tell whether Claude received it, so it was not typed again.", this(ref, "this message"))
	case v.Held:
		return fmt.Sprintf("⚠️ ccbridge stopped before %s reached Claude, %s ago: longer ago than `catch_up` (%s), so it was not delivered on its own.",
			this(ref, "this message"), age, catchUp)
	case v.Reoffer:
		return fmt.Sprintf("⚠️ ccbridge stopped before %s reached Claude, after Deliver anyway was clicked; it was not delivered. The offer is open again.", this(ref, "this message"))
	}
	return fmt.Sprintf("⚠️ %s was sent %s ago, while ccbridge was away: longer ago than `catch_up` (%s), so it was not delivered on its own.",
		this(ref, "This message"), age, catchUp)
}

// PutBackText says an offer clicked but not done when ccbridge stopped is
// open again, until expires.
func PutBackText(ref Ref, expires time.Time) string {
	return fmt.Sprintf("⏸️ ccbridge stopped before %s reached Claude, so it was not delivered. Its offer is open again until <t:%d:f>: click Deliver anyway once ccbridge is back.",
		this(ref, "this message"), expires.Unix())
}

// DeliveringText replaces an offer its author clicked.
func DeliveringText(ref Ref, by chat.User) string {
	return fmt.Sprintf("📨 Delivering %s now, as %s asked.", this(ref, "this message"), chat.Mention(by))
}

// NotReadBackText says a clicked offer's message could not be read back
// from the front end (named as a sentence does: "Discord").
func NotReadBackText(ref Ref, frontEnd string, err error) string {
	return fmt.Sprintf("⚠️ Could not read %s back from %s, so it was not delivered: %s. Send it again.", this(ref, "this message"), frontEnd, chat.ErrText(err))
}
