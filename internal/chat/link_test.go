package chat

import (
	"strings"
	"testing"
)

// A link button opens a URL and is no control: Discord refuses one with a
// custom_id, a button without a URL needs one, and only an http(s) URL of
// at most 512 characters is one ccbridge sends.
func TestCheckMessageLinkButtons(t *testing.T) {
	msg := func(bs ...Button) Message { return Message{Content: "x", Rows: []Row{{Buttons: bs}}} }
	merge := Button{Label: "Merge this", CustomID: "m", Style: Primary}
	good := map[string]Message{
		"link":                 msg(Button{Label: "Open in browser", URL: "https://ccbridge.example/s/tok/"}),
		"loopback http":        msg(Button{Label: "Open", URL: "http://127.0.0.1:7878/s/tok/diff"}),
		"beside a control":     msg(merge, Button{Label: "Open in browser", URL: "https://h.example/s/t/"}),
		"two links, no ids":    msg(Button{Label: "A", URL: "https://h.example/a"}, Button{Label: "B", URL: "https://h.example/b"}),
		"512 characters":       msg(Button{Label: "Open", URL: "https://h.example/" + strings.Repeat("a", 512-len("https://h.example/"))}),
		"disabled link button": msg(Button{Label: "Open", URL: "https://h.example/", Disabled: true}),
	}
	for name, m := range good {
		if err := CheckMessage(m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := map[string]Message{
		"link with a custom_id": msg(Button{Label: "Open", URL: "https://h.example/", CustomID: "x"}),
		"link with a style":     msg(Button{Label: "Open", URL: "https://h.example/", Style: Primary}),
		"javascript:":           msg(Button{Label: "Open", URL: "javascript:alert(1)"}),
		"ftp:":                  msg(Button{Label: "Open", URL: "ftp://h.example/f"}),
		"no host":               msg(Button{Label: "Open", URL: "https:///s/x"}),
		"relative":              msg(Button{Label: "Open", URL: "/s/tok/"}),
		"a space":               msg(Button{Label: "Open", URL: "https://h.example/a b"}),
		"513 characters":        msg(Button{Label: "Open", URL: "https://h.example/" + strings.Repeat("a", 513-len("https://h.example/"))}),
		"no label":              msg(Button{URL: "https://h.example/"}),
		"no url, no custom_id":  msg(Button{Label: "Open"}),
	}
	for name, m := range bad {
		if err := CheckMessage(m); err == nil {
			t.Errorf("%s: passed", name)
		}
	}
}

// A link button's URL is part of a message's face: a bound message whose
// link was pointed elsewhere (by anyone holding the token) is noticed.
// Buttons without a URL keep the face they always had, so the bindings
// recorded before link buttons existed still hold.
func TestFaceCoversLinkButtons(t *testing.T) {
	rows := func(url string) []Row {
		return []Row{{Buttons: []Button{{Label: "Merge this", CustomID: "m", Style: Primary}, {Label: "Open in browser", URL: url}}}}
	}
	a, b := Face("x", rows("https://h.example/s/a/")), Face("x", rows("https://evil.example/s/a/"))
	if a == b {
		t.Errorf("a link pointed elsewhere keeps the face %q", a)
	}
	// Discord reports a link button with style 5; ccbridge draws it with none.
	shown := rows("https://h.example/s/a/")
	shown[0].Buttons[1].Style = 5
	if got := Face("x", shown); got != a {
		t.Errorf("the link as Discord shows it has face %q, drawn %q", got, a)
	}
	plain := []Row{{Buttons: []Button{{Label: "Merge this", CustomID: "m", Style: Primary}}}}
	if got, want := Face("x", plain), "x\x1erow\x1fbutton\x1fMerge this\x1fm\x1f1\x1ffalse"; got != want {
		t.Errorf("a button's face changed: %q, was %q", got, want)
	}
}
