package chat

import "testing"

// A reference to a message is written once by the core and made a link by
// each front end: RenderRefs hands every reference, and only references,
// to the front end's link function.
func TestRenderRefs(t *testing.T) {
	link := func(r MessageRef) string { return "{" + r.Label + "@" + r.ChannelID + "#" + r.MessageID + "}" }
	cases := map[string]string{
		"⚠️ " + MessageRef{ChannelID: "10", MessageID: "20", Label: "this message"}.String() + " was sent":                                       "⚠️ {this message@10#20} was sent",
		MessageRef{ChannelID: "-1001.42", MessageID: "7", Label: "a"}.String() + MessageRef{ChannelID: "1", MessageID: "2", Label: "b"}.String(): "{a@-1001.42#7}{b@1#2}",
		"no reference <#123> <t:1:R> <ref:x>":              "no reference <#123> <t:1:R> <ref:x>",
		"unclosed <ref:1/2|this message":                   "unclosed <ref:1/2|this message",
		"a < b and <ref:1/2|x> after":                      "a < b and {x@1#2} after",
		"no message id <ref:12|x>, nor channel <ref:/3|y>": "no message id <ref:12|x>, nor channel <ref:/3|y>",
	}
	for in, want := range cases {
		if got := RenderRefs(in, link); got != want {
			t.Errorf("RenderRefs(%q) = %q, want %q", in, got, want)
		}
	}
}

// A label cannot end the reference early or smuggle in another.
func TestMessageRefLabelIsText(t *testing.T) {
	ref := MessageRef{ChannelID: "1", MessageID: "2", Label: "x|y>z<ref:3/4|w>"}
	got := RenderRefs(ref.String(), func(r MessageRef) string { return "[" + r.Label + "]" })
	if got != "[xyz<ref:3/4w]" {
		t.Errorf("rendered %q", got)
	}
}

// PlainRef is a reference where no link can be made: its words.
func TestPlainRef(t *testing.T) {
	if got := RenderRefs("see "+MessageRef{ChannelID: "1", MessageID: "2", Label: "this message"}.String(), PlainRef); got != "see this message" {
		t.Errorf("got %q", got)
	}
}

// A label is the words of a link a front end writes in Markdown: brackets
// or a line break in it would end the link's text early, as anything but
// an id's characters in its ids would end the link's URL, so a reference
// written with them (text from elsewhere that only looks like one) stays
// text, and String drops them.
func TestMessageRefLabelCannotBreakTheLink(t *testing.T) {
	link := func(r MessageRef) string { return "[" + r.Label + "](u)" }
	for _, in := range []string{"<ref:1/2|x](https://evil.example)>", "<ref:1/2|a\nb>", "<ref:1/2|[x>", "<ref:1/2)[x](https://evil.example|y>", "<ref:1)(/2|y>"} {
		if got := RenderRefs(in, link); got != in {
			t.Errorf("RenderRefs(%q) = %q", in, got)
		}
	}
	if got := RenderRefs(MessageRef{ChannelID: "1", MessageID: "2", Label: "x](https://evil.example)\n["}.String(), link); got != "[x(https://evil.example)](u)" {
		t.Errorf("got %q", got)
	}
}
