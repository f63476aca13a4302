package telegram

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Inline keyboards. The core's components carry custom_ids of up to 100
// bytes; Telegram's callback_data holds 64. So a button carries a token,
// "<face>:<place>": face names the drawing (a hash of the message's
// content and rows, see faceToken) and place the component within it:
//
//	b<row>.<col>  a button
//	o<row>.<n>    a select's option (picked, or toggled in a multi-select)
//	s<row>        a multi-select's Submit
//
// What the drawing was is kept per message (state.TelegramDrawn, written
// by the Poster when it draws a keyboard), so a click resolves to the
// custom_id and values the core gave, and the event carries the content
// and rows the core drew (its guard compares them with its binding). A
// token whose drawing is unknown (pruned, redrawn since) is "expired".

// Labels of a multi-select's buttons.
const (
	checkedMark = "✓ "
	submitLabel = "Submit"
)

// Button is an InlineKeyboardButton as ccbridge sends it.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	Style        string `json:"style,omitempty"`
}

// Keyboard is an InlineKeyboardMarkup.
type Keyboard struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"`
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// faceToken names a drawing in 8 characters: 40 bits of the hash of its
// face, enough that a click on a keyboard drawn over never hits another.
func faceToken(content string, rows []chat.Row) string {
	sum := sha256.Sum256([]byte(chat.Face(content, rows)))
	return strings.ToLower(b32.EncodeToString(sum[:]))[:8]
}

// styles maps the core's button colours to Telegram's (Secondary: the
// app's own).
var styles = map[chat.ButtonStyle]string{chat.Primary: "primary", chat.Success: "success", chat.Danger: "danger"}

// keyboardOf renders rows as an inline keyboard for the drawing face;
// checked are the options of multi-selects shown ticked (by "row.n"), or
// nil for their defaults. Disabled buttons are left out (Telegram has
// none); a row left empty is dropped. nil when nothing is left.
func keyboardOf(face string, rows []chat.Row, checked map[string]bool) *Keyboard {
	kb := &Keyboard{}
	for r, row := range rows {
		if s := row.Select; s != nil {
			multi := s.MaxValues > 1
			for n, o := range s.Options {
				label := o.Label
				on := o.Default
				if multi && checked != nil {
					on = checked[fmt.Sprintf("%d.%d", r, n)]
				}
				if on {
					label = checkedMark + label
				}
				kb.InlineKeyboard = append(kb.InlineKeyboard, []Button{{Text: label, CallbackData: fmt.Sprintf("%s:o%d.%d", face, r, n)}})
			}
			if multi {
				kb.InlineKeyboard = append(kb.InlineKeyboard, []Button{{Text: submitOf(s), CallbackData: fmt.Sprintf("%s:s%d", face, r), Style: "primary"}})
			}
			continue
		}
		var out []Button
		for c, b := range row.Buttons {
			// A link button carries a capability (the web view's): a topic
			// is read by every member, so it is left out here.
			if b.Disabled || b.Link() {
				continue
			}
			out = append(out, Button{Text: b.Label, CallbackData: fmt.Sprintf("%s:b%d.%d", face, r, c), Style: styles[b.Style]})
		}
		if len(out) > 0 {
			kb.InlineKeyboard = append(kb.InlineKeyboard, out)
		}
	}
	if len(kb.InlineKeyboard) == 0 {
		return nil
	}
	return kb
}

// maxSubmitName bounds the select's name on its Submit, so the button
// stays one line on a phone.
const maxSubmitName = 40

// submitOf is a multi-select's Submit, named after the select: Telegram
// shows no placeholder, and a card may hold several Submits.
func submitOf(s *chat.Select) string {
	name := strings.TrimSpace(s.Placeholder)
	if name == "" {
		return submitLabel
	}
	if r := []rune(name); len(r) > maxSubmitName {
		name = string(r[:maxSubmitName-1]) + "…"
	}
	return submitLabel + " — " + name
}

// token is a parsed callback_data.
type token struct {
	face string
	kind byte // 'b', 'o' or 's'
	row  int
	n    int
}

func parseToken(data string) (token, bool) {
	face, place, ok := strings.Cut(data, ":")
	if !ok || len(face) != 8 || len(place) < 2 {
		return token{}, false
	}
	t := token{face: face, kind: place[0]}
	a, b, two := strings.Cut(place[1:], ".")
	var err error
	if t.row, err = strconv.Atoi(a); err != nil || t.row < 0 {
		return token{}, false
	}
	switch {
	case t.kind == 's' && !two:
	case (t.kind == 'b' || t.kind == 'o') && two:
		if t.n, err = strconv.Atoi(b); err != nil || t.n < 0 {
			return token{}, false
		}
	default:
		return token{}, false
	}
	return t, true
}

// checkedOf reads which multi-select options a keyboard shows ticked.
func checkedOf(kb *Keyboard) map[string]bool {
	out := map[string]bool{}
	if kb == nil {
		return out
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			t, ok := parseToken(b.CallbackData)
			if ok && t.kind == 'o' && strings.HasPrefix(b.Text, checkedMark) {
				out[fmt.Sprintf("%d.%d", t.row, t.n)] = true
			}
		}
	}
	return out
}

// click is what a token means in a drawing.
type click struct {
	customID string
	values   []string
	// toggle: a multi-select option was ticked or unticked; nothing
	// reaches the core until Submit.
	toggle bool
	// short: a Submit with fewer options ticked than the select needs.
	short int
}

// resolve finds what t names in rows; ok is false when it names nothing.
func resolve(rows []chat.Row, t token, checked map[string]bool) (click, bool) {
	if t.row >= len(rows) {
		return click{}, false
	}
	row := rows[t.row]
	switch t.kind {
	case 'b':
		if t.n >= len(row.Buttons) || row.Buttons[t.n].Disabled {
			return click{}, false
		}
		return click{customID: row.Buttons[t.n].CustomID}, true
	case 'o':
		s := row.Select
		if s == nil || t.n >= len(s.Options) {
			return click{}, false
		}
		if s.MaxValues > 1 {
			return click{customID: s.CustomID, toggle: true}, true
		}
		return click{customID: s.CustomID, values: []string{s.Options[t.n].Value}}, true
	case 's':
		s := row.Select
		if s == nil || s.MaxValues <= 1 {
			return click{}, false
		}
		c := click{customID: s.CustomID, values: []string{}}
		for n, o := range s.Options {
			if checked[fmt.Sprintf("%d.%d", t.row, n)] {
				c.values = append(c.values, o.Value)
			}
		}
		if len(c.values) < s.MinValues {
			c.short = s.MinValues
		}
		return c, true
	}
	return click{}, false
}
