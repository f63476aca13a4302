package chat

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Discord's limits on what a message and a modal may hold, in characters
// (code points, as Discord counts them).
const (
	MaxButtonLabel   = 80
	MaxOptionText    = 100 // select option label, value and description
	MaxOptions       = 25
	MaxPlaceholder   = 150
	MaxRows          = 5
	MaxRowButtons    = 5
	MaxModalTitle    = 45
	MaxInputLabel    = 45
	MaxInputLength   = 4000
	MaxModalInputs   = 5
	MaxURL           = 512 // a link button's URL
	MaxThreadName    = 100 // a thread's name (1–100 characters)
	maxSelectChoices = 25
)

// CheckMessage reports every way m breaks a rule Discord enforces on a
// message it is sent or edited to: content length, an empty message,
// component counts and lengths, custom_id length and uniqueness, a link
// button's URL (http or https only: ccbridge links to nothing else). Select
// option descriptions must not be empty: the Discord adapter sends the
// field even when it is "".
func CheckMessage(m Message) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	n := utf8.RuneCountInString(m.Content)
	if n > Limit {
		bad("content has %d characters, over %d", n, Limit)
	}
	if strings.TrimSpace(m.Content) == "" && len(m.Files) == 0 && len(m.Rows) == 0 {
		bad("empty message")
	}
	if len(m.Rows) > MaxRows {
		bad("%d rows, over %d", len(m.Rows), MaxRows)
	}
	ids := map[string]bool{}
	checkID := func(id string) {
		if id == "" || len(id) > MaxIDLen {
			bad("custom_id %q is not 1-%d characters", id, MaxIDLen)
		}
		if ids[id] {
			bad("custom_id %q is used twice", id)
		}
		ids[id] = true
	}
	for i, r := range m.Rows {
		if r.Select != nil && len(r.Buttons) > 0 {
			bad("row %d holds a select and buttons", i)
		}
		if r.Select == nil && (len(r.Buttons) == 0 || len(r.Buttons) > MaxRowButtons) {
			bad("row %d has %d buttons", i, len(r.Buttons))
		}
		for _, b := range r.Buttons {
			if b.Link() {
				checkLink(b, bad)
			} else {
				checkID(b.CustomID)
			}
			if l := utf8.RuneCountInString(b.Label); l == 0 || l > MaxButtonLabel {
				bad("button label %q is not 1-%d characters", b.Label, MaxButtonLabel)
			}
		}
		if s := r.Select; s != nil {
			checkID(s.CustomID)
			if l := utf8.RuneCountInString(s.Placeholder); l > MaxPlaceholder {
				bad("placeholder has %d characters, over %d", l, MaxPlaceholder)
			}
			if len(s.Options) == 0 || len(s.Options) > MaxOptions {
				bad("select has %d options", len(s.Options))
			}
			maxValues := s.MaxValues
			if maxValues == 0 {
				maxValues = 1 // omitted: Discord's default
			}
			if s.MinValues < 0 || maxValues > maxSelectChoices || s.MinValues > maxValues || maxValues > len(s.Options) {
				bad("select min %d / max %d values with %d options", s.MinValues, s.MaxValues, len(s.Options))
			}
			values := map[string]bool{}
			for _, o := range s.Options {
				for what, v := range map[string]string{"label": o.Label, "value": o.Value, "description": o.Description} {
					if l := utf8.RuneCountInString(v); l == 0 || l > MaxOptionText {
						bad("option %s %q is not 1-%d characters", what, v, MaxOptionText)
					}
				}
				if values[o.Value] {
					bad("option value %q is used twice", o.Value)
				}
				values[o.Value] = true
			}
		}
	}
	return errors.Join(errs...)
}

// checkLink checks a link button: no custom_id or style (Discord refuses
// a link with a custom_id), an absolute http(s) URL with a host, within
// MaxURL.
func checkLink(b Button, bad func(string, ...any)) {
	if b.CustomID != "" || b.Style != 0 {
		bad("link button %q has a custom_id or a style", b.Label)
	}
	u, err := url.Parse(b.URL)
	switch {
	case utf8.RuneCountInString(b.URL) > MaxURL:
		bad("link button %q: url has %d characters, over %d", b.Label, utf8.RuneCountInString(b.URL), MaxURL)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(b.URL, " \t\r\n"):
		bad("link button %q: %q is not an http(s) URL", b.Label, b.URL)
	}
}

// CheckModal reports every way m breaks Discord's modal rules.
func CheckModal(m Modal) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if m.CustomID == "" || len(m.CustomID) > MaxIDLen {
		bad("modal custom_id %q is not 1-%d characters", m.CustomID, MaxIDLen)
	}
	if l := utf8.RuneCountInString(m.Title); l == 0 || l > MaxModalTitle {
		bad("modal title %q is not 1-%d characters", m.Title, MaxModalTitle)
	}
	if len(m.Inputs) == 0 || len(m.Inputs) > MaxModalInputs {
		bad("modal has %d inputs", len(m.Inputs))
	}
	for _, in := range m.Inputs {
		if in.CustomID == "" || len(in.CustomID) > MaxIDLen {
			bad("input custom_id %q is not 1-%d characters", in.CustomID, MaxIDLen)
		}
		if l := utf8.RuneCountInString(in.Label); l == 0 || l > MaxInputLabel {
			bad("input label %q is not 1-%d characters", in.Label, MaxInputLabel)
		}
		if in.MaxLength < 0 || in.MaxLength > MaxInputLength {
			bad("input max_length %d is not 1-%d", in.MaxLength, MaxInputLength)
		}
		limit := MaxInputLength
		if in.MaxLength > 0 {
			limit = in.MaxLength
		}
		if l := utf8.RuneCountInString(in.Value); l > limit {
			bad("input value has %d characters, over %d", l, limit)
		}
	}
	return errors.Join(errs...)
}
