package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// shown is what Telegram shows of a chunk, and its entities.
func shown(t *testing.T, chunk string) (string, []faketelegram.Entity) {
	t.Helper()
	text, ents, err := faketelegram.ParseText(chunk, "HTML")
	if err != nil {
		t.Fatalf("refused: %v\n%.200q", err, chunk)
	}
	return text, ents
}

func units(s string) int { return len(utf16.Encode([]rune(s))) }

// A chunk is full at 4,096 UTF-16 code units of text: not bytes, not
// characters, and not counting tags or escapes.
func TestSplitCountsUTF16(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []int // UTF-16 units of text per chunk
	}{
		{"ascii", strings.Repeat("a", 5000), []int{4096, 904}},
		{"two bytes, one unit", strings.Repeat("é", 5000), []int{4096, 904}},
		{"surrogate pairs", strings.Repeat("😀", 3000), []int{4096, 1904}},
		{"escapes are one character", strings.Repeat("<&>", 2000), []int{4096, 1904}},
		{"tags are not text", "**" + strings.Repeat("b", 4096) + "**", []int{4096}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := Split(tc.in)
			var got []int
			for _, c := range chunks {
				text, _ := shown(t, c)
				got = append(got, units(text))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("chunk sizes %v, want %v", got, tc.want)
			}
			checkChunks(t, tc.in, chunks)
		})
	}
}

// A cut falls at a paragraph break, else a line break, else a space.
func TestSplitPrefersBreaks(t *testing.T) {
	para := strings.TrimSpace(strings.Repeat("lorem ipsum dolor ", 150)) // 2,699 characters
	lines := strings.Repeat("a line of text\n", 200)                     // 3,000
	words := strings.Repeat("word ", 1600)
	for _, tc := range []struct {
		name, in string
		want     []string // the end of each chunk's text
	}{
		{"paragraph", para + "\n\n" + para + "\n\n" + para, []string{"dolor", "dolor", "dolor"}},
		{"line", lines + lines, []string{"a line of text", "a line of text"}},
		{"word", words, []string{"word", "word"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := Split(tc.in)
			if len(chunks) != len(tc.want) {
				t.Fatalf("%d chunks, want %d", len(chunks), len(tc.want))
			}
			for i, c := range chunks {
				text, _ := shown(t, c)
				if !strings.HasSuffix(text, tc.want[i]) {
					t.Errorf("chunk %d ends %q, want a whole %q", i, text[max(len(text)-30, 0):], tc.want[i])
				}
			}
			if tc.name == "paragraph" {
				// the first paragraph and a half do not fit: the cut is at a break
				if text, _ := shown(t, chunks[0]); text != para {
					t.Errorf("chunk 0 is not the first paragraph: %d characters", len(text))
				}
			}
			checkChunks(t, tc.in, chunks)
		})
	}
}

// A code block cut in two is closed at the end of one chunk and reopened,
// with its language, at the start of the next, at a line break.
func TestSplitReopensCodeBlock(t *testing.T) {
	var b strings.Builder
	b.WriteString("Here:\n\n```go\n")
	for i := range 400 {
		fmt.Fprintf(&b, "fmt.Println(%d, \"<x> & y\")\n\tif x {\n", i)
	}
	b.WriteString("```\n\nDone.")
	chunks := Split(b.String())
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want a block cut at least twice", len(chunks))
	}
	for i, c := range chunks[1 : len(chunks)-1] {
		if !strings.HasPrefix(c, `<pre><code class="language-go">fmt.Println(`) || !strings.HasSuffix(c, "</code></pre>") {
			t.Errorf("chunk %d does not reopen and close the block at a line that starts the code: %.60q … %.40q", i+1, c, c[len(c)-40:])
		}
		text, ents := shown(t, c)
		if len(ents) != 1 || ents[0].Type != "pre" || ents[0].Language != "go" || ents[0].Length != units(text) {
			t.Errorf("chunk %d: entities %+v, want one go block over all of it", i+1, ents)
		}
	}
	if !strings.HasSuffix(chunks[0], "</code></pre>") || !strings.HasPrefix(chunks[len(chunks)-1], `<pre><code class="language-go">`) {
		t.Errorf("first or last chunk does not close or reopen the block")
	}
	checkChunks(t, b.String(), chunks)
}

// Inline formatting, a link and a quote open at a cut are closed and
// reopened.
func TestSplitReopensInline(t *testing.T) {
	words := strings.TrimSpace(strings.Repeat("word ", 1000))
	for _, tc := range []struct{ name, in, open, close string }{
		{"bold", "**" + words + "**", "<b>", "</b>"},
		{"italic in strike", "~~*" + words + "*~~", "<s><i>", "</i></s>"},
		{"link", "[" + words + "](https://x.test/?a=1&b=2)", `<a href="https://x.test/?a=1&amp;b=2">`, "</a>"},
		{"quote", "> " + strings.Repeat("quoted line\n> ", 500), "<blockquote>", "</blockquote>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := Split(tc.in)
			if len(chunks) != 2 {
				t.Fatalf("%d chunks, want 2", len(chunks))
			}
			for i, c := range chunks {
				if !strings.HasPrefix(c, tc.open) || !strings.HasSuffix(c, tc.close) {
					t.Errorf("chunk %d: %.40q … %.20q, want it in %s", i, c, c[len(c)-20:], tc.open)
				}
			}
			checkChunks(t, tc.in, chunks)
		})
	}
}

// A code block that would be cut but fits a message on its own starts the
// next message instead, as on Discord.
func TestSplitKeepsShortBlockWhole(t *testing.T) {
	code := strings.Repeat("x = 1\n", 500)
	// The break before the block is in the first half of the window, where
	// a cut would not fall: the block is moved whole, not cut in two.
	in := strings.Repeat("text ", 300) + "\n\n```py\n" + code + "```\n\nafter"
	chunks := Split(in)
	if len(chunks) != 2 {
		t.Fatalf("%d chunks, want 2", len(chunks))
	}
	if strings.Contains(chunks[0], "<pre") || !strings.HasPrefix(chunks[1], `<pre><code class="language-py">`) {
		t.Fatalf("the block does not start the second chunk: %.60q", chunks[1])
	}
	if text, _ := shown(t, chunks[1]); !strings.HasPrefix(text, strings.TrimSpace(code)) {
		t.Fatalf("the block is not whole in the second chunk")
	}
	checkChunks(t, in, chunks)
}

// A cut never parts a character drawn as one: an emoji's joiner, a skin
// tone, a combining accent, a flag.
func TestSplitKeepsGraphemes(t *testing.T) {
	for _, g := range []string{"👨‍👩‍👧", "👍🏽", "e\u0301\u0302", "🇫🇷", "🏳️‍🌈"} {
		in := "a" + strings.Repeat(g, 5000/units(g)+3)
		for i, c := range Split(in) {
			text, _ := shown(t, c)
			if strings.ReplaceAll(strings.TrimPrefix(text, "a"), g, "") != "" {
				t.Errorf("%q: chunk %d parts a character: starts %q, ends %q", g, i, text[:8], text[len(text)-8:])
			}
		}
	}
}

// Telegram keeps 100 formatting entities of a message and refuses one
// whose entities are too large: a chunk opens no more.
func TestSplitEntityBudget(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"many bold words", strings.Repeat("**b** *i* ", 200)},
		{"long links", strings.Repeat("[l](https://x.test/"+strings.Repeat("p", 300)+") ", 100)},
		{"long link", "[x](https://x.test/" + strings.Repeat("p", maxURL) + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunks := Split(tc.in)
			checkChunks(t, tc.in, chunks)
			if tc.name == "long link" {
				if _, ents := shown(t, chunks[0]); len(ents) != 0 {
					t.Errorf("a link of %d bytes is linked", maxURL+20)
				}
				return
			}
			if len(chunks) < 2 {
				t.Fatalf("one chunk: the budget was not applied")
			}
		})
	}
}

// Each chunk of a 20,000-character reply with code blocks, sent to the
// fake Telegram as sendMessage with parse_mode HTML, is accepted, and the
// messages show the reply.
func TestChunksAcceptedByTelegram(t *testing.T) {
	tg := faketelegram.New(t)
	var b strings.Builder
	for i := 0; b.Len() < 20000; i++ {
		fmt.Fprintf(&b, "## Step %d\n\nThe **handler** checks `a < b && c > d` and *then* calls [the docs](https://go.dev/doc?x=%d&y=\"q\"). Ask @owner.\n\n", i, i)
		fmt.Fprintf(&b, "```go\nfunc step%d(x int) error {\n", i)
		for j := range 25 + i*7 {
			fmt.Fprintf(&b, "\tif x > %d { return fmt.Errorf(\"<%d> & %%w\", err) }\n", j, j)
		}
		b.WriteString("}\n```\n\n- item one\n- item two\n  - nested 😀\n\n> a quote\n\n| col | n |\n|-----|---|\n| a | 1 |\n\n")
	}
	reply := b.String()
	chunks := Split(reply)
	if len(chunks) < 5 {
		t.Fatalf("%d chunks for %d characters", len(chunks), len(reply))
	}
	for i, c := range chunks {
		body, _ := json.Marshal(map[string]any{"chat_id": tg.ChatID, "text": c, "parse_mode": "HTML"})
		resp, err := http.Post(tg.URL+"/bot"+tg.Token+"/sendMessage", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			OK          bool   `json:"ok"`
			Description string `json:"description"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if !r.OK {
			t.Fatalf("chunk %d refused: %s", i, r.Description)
		}
	}
	msgs := tg.Messages(tg.ChatID, 0)
	if len(msgs) != len(chunks) {
		t.Fatalf("%d messages for %d chunks", len(msgs), len(chunks))
	}
	var all strings.Builder
	blocks := 0
	for _, m := range msgs {
		all.WriteString(m.Text)
		for _, e := range m.Entities {
			if e.Type == "pre" && e.Language == "go" {
				blocks++
			}
		}
	}
	if got, want := squeeze(all.String()), squeeze(render(reply).text); got != want {
		t.Fatalf("the messages show other text than the reply (%d vs %d bytes)", len(got), len(want))
	}
	if want := strings.Count(reply, "```go"); blocks < want {
		t.Fatalf("%d go blocks shown, want at least %d", blocks, want)
	}
}
