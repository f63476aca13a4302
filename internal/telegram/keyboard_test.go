package telegram

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Telegram shows no select's placeholder: a card with two multi-selects
// (or a multi-select beside the card's own Submit) names each Submit
// after its select, so no two buttons read alike.
func TestKeyboardMultiSelectSubmitNamesItsSelect(t *testing.T) {
	opts := []chat.Option{{Label: "A", Value: "a"}, {Label: "B", Value: "b"}}
	rows := []chat.Row{
		{Select: &chat.Select{CustomID: "s1", Placeholder: "1. Color", MinValues: 1, MaxValues: 2, Options: opts}},
		{Select: &chat.Select{CustomID: "s2", Placeholder: "2. Features", MinValues: 1, MaxValues: 2, Options: opts}},
		{Select: &chat.Select{CustomID: "s3", MinValues: 1, MaxValues: 2, Options: opts}},
		{Buttons: []chat.Button{{Label: "Submit", CustomID: "submit"}}},
	}
	var submits []string
	for _, row := range keyboardOf("abcdefgh", rows, nil).InlineKeyboard {
		for _, b := range row {
			if strings.HasPrefix(b.Text, submitLabel) && strings.Contains(b.CallbackData, ":s") {
				submits = append(submits, b.Text)
			}
		}
	}
	if want := []string{"Submit — 1. Color", "Submit — 2. Features", "Submit"}; !slices.Equal(submits, want) {
		t.Errorf("the selects' Submits read %q, want %q", submits, want)
	}
}
