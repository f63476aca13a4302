package format

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// checkChunks holds Split's chunks of md to what Telegram accepts and
// shows (see problems).
func checkChunks(t *testing.T, md string, chunks []string) {
	t.Helper()
	for _, p := range problems(md, chunks) {
		t.Error(p)
	}
}

// problems lists how chunks of md break what Telegram accepts and shows:
// each must parse as sendMessage parses it (the fake's parser, tdlib's
// rules: allowed tags only, balanced, escaped; 1–4,096 UTF-16 code units
// after trimming), open at most 100 entities of bounded size and nest them
// as Telegram lets them nest; together they must show the whole reply's
// text, in order, nothing lost or doubled (whitespace at the cuts aside).
func problems(md string, chunks []string) []string {
	var out []string
	var shown strings.Builder
	for i, c := range chunks {
		text, ents, err := faketelegram.ParseText(c, "HTML")
		if err != nil {
			out = append(out, fmt.Sprintf("chunk %d of %d refused: %v\n%.300q", i, len(chunks), err, c))
			continue
		}
		if len(c) > maxHTML {
			out = append(out, fmt.Sprintf("chunk %d has %d bytes of HTML, over %d", i, len(c), maxHTML))
		}
		if len(ents) > maxEntities {
			out = append(out, fmt.Sprintf("chunk %d has %d entities, over %d", i, len(ents), maxEntities))
		}
		size := 0
		for _, e := range ents {
			size += entityBytes + len(e.URL) + len(e.Language)
		}
		if size > maxEntityBytes {
			out = append(out, fmt.Sprintf("chunk %d has %d bytes of entities, over %d", i, size, maxEntityBytes))
		}
		if msg := nesting(ents); msg != "" {
			out = append(out, fmt.Sprintf("chunk %d: %s\n%.300q", i, msg, c))
		}
		shown.WriteString(text)
	}
	if got, want := squeeze(shown.String()), squeeze(render(md).text); got != want {
		at := 0
		for at < len(got) && at < len(want) && got[at] == want[at] {
			at++
		}
		out = append(out, fmt.Sprintf("the chunks show other text than the reply: from byte %d (of %d, want %d)\ngot  %.120q\nwant %.120q",
			at, len(got), len(want), got[at:], want[at:]))
	}
	return out
}

// nesting reports entities Telegram would not keep as sent (tdlib's
// fix_entities drops them silently): crossing ones, anything inside code or
// a code block, code or a code block inside anything but a quote (bold
// around code is dropped there), code or a link inside a link, a quote
// inside a quote.
func nesting(ents []faketelegram.Entity) string {
	for i, o := range ents {
		for j, in := range ents {
			oEnd, inEnd := o.Offset+o.Length, in.Offset+in.Length
			if i == j || in.Offset >= oEnd || o.Offset >= inEnd {
				continue // disjoint
			}
			if !(o.Offset <= in.Offset && inEnd <= oEnd) && !(in.Offset <= o.Offset && oEnd <= inEnd) {
				return "crossing entities " + o.Type + " and " + in.Type
			}
			// Of two over the same text, the parser lists the outer first.
			if in.Offset < o.Offset || inEnd > oEnd || (in.Offset == o.Offset && inEnd == oEnd && j < i) {
				continue // in is not inside o
			}
			isCode := in.Type == "code" || in.Type == "pre"
			switch {
			case o.Type == "code" || o.Type == "pre":
				return in.Type + " inside " + o.Type
			case isCode && o.Type != "blockquote":
				return in.Type + " inside " + o.Type
			case o.Type == "text_link" && in.Type == "text_link":
				return "a link inside a link"
			case o.Type == "blockquote" && in.Type == "blockquote":
				return "a quote inside a quote"
			}
		}
	}
	return ""
}

// squeeze drops whitespace and invisible format characters.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
}

// pieces are what random replies are made of: Markdown's markers, whole
// and broken, text Telegram's HTML must escape, characters of every UTF-8
// and UTF-16 width, and what Telegram refuses in a text.
var pieces = []string{
	"word ", "words and more words ", "Ünïcödé ", "日本語のテキスト", "😀", "👍🏽", "👨‍👩‍👧", "e\u0301", "\u200d",
	"**", "*", "_", "__", "~~", "`", "``", "\n```go\n", "\n```\n", "\n~~~\n", "\n````md\n",
	"\n", "\n\n", "\n> ", "\n- ", "\n  - ", "\n1. ", "\n# ", "\n#### ", "\n---\n", "    ",
	"[", "]", "(", ")", "](https://x.test/p?q=1&r=2)", "](javascript:x)", "](tg://user?id=1)", "![",
	"<", ">", "&", "&amp;", "&lt;", "&#x1F600;", "&#0;", "\"", "'", "\\", "\\*",
	"<b>", "</b>", "<br>", "<!--", "-->", "<div>", "@alice ", "a@b.test ",
	"\n| a | b |\n|---|---|\n| 1 | 2 |\n", "\t", "\r\n", "\x00", "\x1b", "\u202e", "\xff", "\u2028",
}

// randomReply builds a reply of about n pieces, sometimes with a long
// run of one piece so cuts fall inside words, code and formatting.
func randomReply(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		p := pieces[rng.IntN(len(pieces))]
		if rng.IntN(40) == 0 {
			p = strings.Repeat(p, 1+rng.IntN(3000))
		}
		b.WriteString(p)
	}
	return b.String()
}

// FuzzSplit holds Split to Telegram's rules for any input. go test runs
// its seeds (the constructs, malformed Markdown, and random replies long
// enough to be cut); go test -fuzz=FuzzSplit explores further.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"", "plain", "**unclosed", "```go\nunclosed fence", "`", "> ", "- ", "[x](", "<", "&", "\xff\xfe",
		"# h\n\n**b** *i* ~~s~~ `c`\n\n```go\nx := 1\n```\n\n> q\n\n- a\n  - b\n\n| a | b |\n|---|---|\n| 1 | 2 |",
		strings.Repeat("a", 5000), strings.Repeat("😀", 3000), strings.Repeat("**b** ", 800),
		"```\n" + strings.Repeat("x <y> & z\n", 1000) + "```",
		strings.Repeat("[l](https://x.test/"+strings.Repeat("p", 300)+") ", 200),
	} {
		f.Add(s)
	}
	rng := rand.New(rand.NewPCG(27, 3))
	for range 150 {
		f.Add(randomReply(rng, 1+rng.IntN(400)))
	}
	f.Fuzz(func(t *testing.T, md string) {
		checkChunks(t, md, Split(md))
	})
}

// The checker itself finds each kind of fault.
func TestProblemsFindsFaults(t *testing.T) {
	long := strings.Repeat("😀", 2049)
	many := strings.Repeat("<b>x</b> ", maxEntities+1)
	for _, tc := range []struct {
		name, md string
		chunks   []string
		want     string
	}{
		{"unescaped", "a < b", []string{"a < b"}, "refused"},
		{"unknown tag", "a", []string{"<u>a</u><br>"}, "refused"},
		{"unbalanced", "**a**", []string{"<b>a"}, "refused"},
		{"too long", long, []string{long}, "refused"},
		{"blank", "a", []string{"a", "<b> </b>"}, "refused"},
		{"lost", "one two", []string{"one"}, "other text"},
		{"doubled", "one two", []string{"one two", "two"}, "other text"},
		{"reordered", "one two", []string{"two", "one"}, "other text"},
		{"entities", strings.Repeat("**x** ", maxEntities+1), []string{many}, "entities, over"},
		{"code in link", "[`a`](https://x.test)", []string{`<a href="https://x.test"><code>a</code></a>`}, "code inside text_link"},
		{"code in bold", "**`a`**", []string{"<b><code>a</code></b>"}, "code inside bold"},
		{"link in link", "[a](https://x.test)", []string{`<a href="https://x.test"><a href="https://y.test">a</a></a>`}, "a link inside a link"},
		{"bold in code", "`a`", []string{"<code><b>a</b></code>"}, "inside code"},
	} {
		got := strings.Join(problems(tc.md, tc.chunks), "\n")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems = %q, want one saying %q", tc.name, got, tc.want)
		}
	}
	if got := problems("**a** b", []string{"<b>a</b> b"}); got != nil {
		t.Errorf("a good chunk: %q", got)
	}
}
