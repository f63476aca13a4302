package faketelegram

import (
	"reflect"
	"testing"
)

func TestHTMLParses(t *testing.T) {
	for _, tc := range []struct {
		in, text string
		ents     []Entity
	}{
		{"plain", "plain", nil},
		{"<b>bold</b> and <i>it</i>", "bold and it", []Entity{{Type: "bold", Length: 4}, {Type: "italic", Offset: 9, Length: 2}}},
		{"<B>caps</B>", "caps", []Entity{{Type: "bold", Length: 4}}},
		{"a &lt; b &amp;&amp; c &gt; d &quot;q&quot;", `a < b && c > d "q"`, nil},
		{"&#128512;&#x41;", "😀A", nil},
		{"R&D &copy; &nbsp", "R&D &copy; &nbsp", nil}, // unknown entities stay as they are
		{`<a href="https://x.test/?a=1&amp;b=2">link</a>`, "link", []Entity{{Type: "text_link", Length: 4, URL: "https://x.test/?a=1&b=2"}}},
		{`<pre><code class="language-go">x := 1</code></pre>`, "x := 1", []Entity{{Type: "pre", Length: 6, Language: "go"}}},
		{"<pre>raw</pre>", "raw", []Entity{{Type: "pre", Length: 3}}},
		{"😀<b>x</b>", "😀x", []Entity{{Type: "bold", Offset: 2, Length: 1}}}, // UTF-16 offsets
		{"<b><i>both</i></b>", "both", []Entity{{Type: "bold", Length: 4}, {Type: "italic", Length: 4}}},
		{`<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler>`, "st", []Entity{{Type: "spoiler", Length: 1}, {Type: "spoiler", Offset: 1, Length: 1}}},
		{"<blockquote expandable>q</blockquote>", "q", []Entity{{Type: "expandable_blockquote", Length: 1}}},
		{"<b></b>x", "x", nil}, // empty entities vanish
	} {
		text, ents, msg := parseHTML(tc.in)
		if msg != "" || text != tc.text || !reflect.DeepEqual(ents, tc.ents) {
			t.Errorf("parseHTML(%q) = %q %+v %q, want %q %+v", tc.in, text, ents, msg, tc.text, tc.ents)
		}
	}
}

func TestHTMLRefuses(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"<b>open", `Can't find end tag corresponding to start tag "b"`},
		{"a < b", `Unsupported start tag "" at byte offset 2`},
		{"x <div>y</div>", `Unsupported start tag "div" at byte offset 2`},
		{"</b>", "Unexpected end tag at byte offset 0"},
		{"<b><i>x</b></i>", `Unmatched end tag at byte offset 7, expected "</i>", found "</b>"`},
		{"text <b", "Unclosed start tag at byte offset 5"},
		{`<a href="x>y`, "Unclosed start tag at byte offset 0"},
		{"<code>a<b</code>", `Unsupported start tag "b</code" at byte offset 7`}, // a bare '<' opens a tag even in code
		{`<span class="x">s</span>`, `Tag "span" must have class "tg-spoiler" at byte offset 0`},
	} {
		_, _, msg := parseHTML(tc.in)
		if msg != tc.msg {
			t.Errorf("parseHTML(%q): %q, want %q", tc.in, msg, tc.msg)
		}
	}
}

func TestMarkdownV2Parses(t *testing.T) {
	for _, tc := range []struct {
		in, text string
		ents     []Entity
	}{
		{"plain text", "plain text", nil},
		{`*bold* _it_ __under__ ~s~ ||sp||`, "bold it under s sp", []Entity{
			{Type: "bold", Length: 4}, {Type: "italic", Offset: 5, Length: 2}, {Type: "underline", Offset: 8, Length: 5},
			{Type: "strikethrough", Offset: 14, Length: 1}, {Type: "spoiler", Offset: 16, Length: 2}}},
		{`1\. done\! \(a\) a\-b \#x \\`, `1. done! (a) a-b #x \`, nil},
		{"`a.b_c*`", "a.b_c*", []Entity{{Type: "code", Length: 6}}}, // reserved characters are literal in code
		{"```go\nx := y.z()\n```", "x := y.z()\n", []Entity{{Type: "pre", Length: 11, Language: "go"}}},
		{"```\n.!\\`\n```", ".!`\n", []Entity{{Type: "pre", Length: 4}}},
		{`[link](https://x.test/a\)b)`, "link", []Entity{{Type: "text_link", Length: 4, URL: "https://x.test/a)b"}}},
		{`*bold _both_*`, "bold both", []Entity{{Type: "bold", Length: 9}, {Type: "italic", Offset: 5, Length: 4}}},
		{"😀*x*", "😀x", []Entity{{Type: "bold", Offset: 2, Length: 1}}},
		{">quoted\n>more\nafter", "quoted\nmore\nafter", []Entity{{Type: "blockquote", Length: 12}}},
		{`![👍](tg://emoji?id=5368324170671202286)`, "👍", []Entity{{Type: "custom_emoji", Length: 2, CustomEmojiID: "5368324170671202286"}}},
		{"a\\qb", "aqb", nil}, // any ASCII character may be escaped
	} {
		text, ents, msg := parseMarkdownV2(tc.in)
		if msg != "" || text != tc.text || !reflect.DeepEqual(ents, tc.ents) {
			t.Errorf("parseMarkdownV2(%q) = %q %+v %q, want %q %+v", tc.in, text, ents, msg, tc.text, tc.ents)
		}
	}
}

func TestMarkdownV2Refuses(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"done.", `Character '.' is reserved and must be escaped with the preceding '\'`},
		{"a-b", `Character '-' is reserved and must be escaped with the preceding '\'`},
		{"(x)", `Character '(' is reserved and must be escaped with the preceding '\'`},
		{"x!", `Character '!' is reserved and must be escaped with the preceding '\'`},
		{"a | b", `Character '|' is reserved and must be escaped with the preceding '\'`},
		{"#tag", `Character '#' is reserved and must be escaped with the preceding '\'`},
		{"*open", "Can't find end of Bold entity at byte offset 0"},
		{"x _it", "Can't find end of Italic entity at byte offset 2"},
		{"`code", "Can't find end of Code entity at byte offset 0"},
		{"```\npre", "Can't find end of Pre entity at byte offset 0"},
		{"[a](http://x", "Can't find end of a URL at byte offset 4"},
		{"*a _b* c_", "Can't find end of Italic entity at byte offset 8"}, // entities nest, they do not cross
		{"*a.*", `Character '.' is reserved and must be escaped with the preceding '\'`},
	} {
		_, _, msg := parseMarkdownV2(tc.in)
		if msg != tc.msg {
			t.Errorf("parseMarkdownV2(%q): %q, want %q", tc.in, msg, tc.msg)
		}
	}
}

// Through the API: a text whose entities do not parse is refused with
// "can't parse entities", and an unknown parse_mode too.
func TestParseModeRefusedOverTheAPI(t *testing.T) {
	s := New(t)
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "1.5 done", "parse_mode": "MarkdownV2"}, 400,
		`Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\'`)
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "if a < b", "parse_mode": "HTML"}, 400,
		`Bad Request: can't parse entities: Unsupported start tag "" at byte offset 5`)
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "x", "parse_mode": "BBCode"}, 400,
		"Bad Request: unsupported parse_mode")
	refused(t, s, "sendDocument", map[string]any{"chat_id": s.ChatID, "document": "nope", "caption": "<b>x", "parse_mode": "HTML"}, 400,
		`Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`)
	m := send(t, s, map[string]any{"text": "*ok*", "parse_mode": "MarkdownV2"})
	if m.Text != "ok" || len(m.Entities) != 1 {
		t.Fatalf("%+v", m)
	}
	// Explicit entities must lie inside the text.
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "ab", "entities": []any{map[string]any{"type": "bold", "offset": 1, "length": 5}}}, 400,
		"Bad Request: can't parse entities: entity beyond the end of the text")
}

func TestLegacyMarkdown(t *testing.T) {
	for _, tc := range []struct {
		in, text string
		ents     []Entity
	}{
		{"1. done! (a-b)", "1. done! (a-b)", nil}, // nothing else is reserved
		{"*b* _i_ `c`", "b i c", []Entity{{Type: "bold", Length: 1}, {Type: "italic", Offset: 2, Length: 1}, {Type: "code", Offset: 4, Length: 1}}},
		{"```go\nx\n```", "x\n", []Entity{{Type: "pre", Length: 2, Language: "go"}}},
		{"[site](https://x.test)", "site", []Entity{{Type: "text_link", Length: 4, URL: "https://x.test"}}},
		{`a\_b`, "a_b", nil},
		{"*a _b_*", "a _b_", []Entity{{Type: "bold", Length: 5}}}, // no nesting
	} {
		text, ents, msg := parseMarkdown(tc.in)
		if msg != "" || text != tc.text || !reflect.DeepEqual(ents, tc.ents) {
			t.Errorf("parseMarkdown(%q) = %q %+v %q, want %q %+v", tc.in, text, ents, msg, tc.text, tc.ents)
		}
	}
	for _, tc := range []struct{ in, msg string }{
		{"snake_case", "Can't find end of the entity starting at byte offset 5"},
		{"x *bold", "Can't find end of the entity starting at byte offset 2"},
		{"```\ncode``", "Can't find end of the entity starting at byte offset 0"},
	} {
		if _, _, msg := parseMarkdown(tc.in); msg != tc.msg {
			t.Errorf("parseMarkdown(%q): %q, want %q", tc.in, msg, tc.msg)
		}
	}
}
