package chat

import (
	"strconv"
	"strings"
)

// Face is what a message shows a person, as one text: its content and its
// components (labels, custom_ids, styles, menu choices, links' URLs). Two messages with
// one face look alike and do alike when clicked; a card is bound to its
// face, so a button relabelled, or swapped with another, is noticed.
// Discord keeps content without surrounding blanks, so they are dropped;
// fields Discord fills in itself (min and max values) are left out.
func Face(content string, rows []Row) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(content))
	for _, r := range rows {
		b.WriteString("\x1erow")
		if s := r.Select; s != nil {
			b.WriteString("\x1fselect\x1f" + s.CustomID + "\x1f" + s.Placeholder)
			for _, o := range s.Options {
				b.WriteString("\x1foption\x1f" + o.Label + "\x1f" + o.Value + "\x1f" + o.Description + "\x1f" + strconv.FormatBool(o.Default))
			}
		}
		for _, bt := range r.Buttons {
			if bt.Link() {
				// Its style is Discord's to report (5), not drawn.
				b.WriteString("\x1flink\x1f" + bt.Label + "\x1f" + bt.URL + "\x1f" + strconv.FormatBool(bt.Disabled))
				continue
			}
			b.WriteString("\x1fbutton\x1f" + bt.Label + "\x1f" + bt.CustomID + "\x1f" + strconv.Itoa(int(bt.Style)) + "\x1f" + strconv.FormatBool(bt.Disabled))
		}
	}
	return b.String()
}
