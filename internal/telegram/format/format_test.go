package format

import (
	"reflect"
	"sync"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// Each construct of Claude's Markdown, as the one message it becomes.
func TestSplitConstructs(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello", "hello"},
		{"escaped", `a < b && c > d "q"`, "a &lt; b &amp;&amp; c &gt; d &quot;q&quot;"},
		{"heading", "# Title\n\ntext", "<b>Title</b>\n\ntext"},
		{"heading with bold", "## A **b** c", "<b>A b c</b>"},
		{"deep heading", "#### Deep", "<b>Deep</b>"},
		{"bold", "**b** __b__", "<b>b</b> <b>b</b>"},
		{"italic", "*i* _i_", "<i>i</i> <i>i</i>"},
		{"bold italic", "***x***", "<i><b>x</b></i>"},
		{"strike", "~~s~~", "<s>s</s>"},
		{"subtext", "ok: done\n-# Opus 5.5 · ctx <1% · $0.00", "ok: done\n<i>Opus 5.5 · ctx &lt;1% · $0.00</i>"},
		{"subtext line amid text", "a\n-# small **b**\nc", "a\n<i>small <b>b</b></i>\nc"},
		{"subtext marker mid-line", "a -# b", "a -# b"},
		{"code span", "`a<b && c`", "<code>a&lt;b &amp;&amp; c</code>"},
		{"code span keeps markers", "`**x** @bob`", "<code>**x** @bob</code>"},
		{"fenced code", "```go\nif a < b {\n}\n```", "<pre><code class=\"language-go\">if a &lt; b {\n}</code></pre>"},
		{"fence without language", "```\nx\n```", "<pre>x</pre>"},
		{"tilde fence", "~~~python\nprint(1)\n~~~", "<pre><code class=\"language-python\">print(1)</code></pre>"},
		{"odd language", "```go\"><b>\nx\n```", "<pre>x</pre>"},
		{"indented code", "text\n\n    code line\n    more", "text\n\n<pre>code line\nmore</pre>"},
		{"code after text", "see:\n```sh\nls\n```\ndone", "see:\n\n<pre><code class=\"language-sh\">ls</code></pre>\n\ndone"},
		{"link", "[site](https://x.test/a?b=1&c=2)", `<a href="https://x.test/a?b=1&amp;c=2">site</a>`},
		{"link with quote", `[q](https://x.test/"><b>)`, `<a href="https://x.test/%22%3E%3Cb%3E">q</a>`},
		{"mailto and tg", "[m](mailto:a@b.test) [t](tg://resolve?domain=x)",
			`<a href="mailto:a@b.test">m</a> <a href="tg://resolve?domain=x">t</a>`},
		{"relative link", "[main.go](internal/main.go)", "main.go (internal/main.go)"},
		{"relative link named by itself", "[a/b.go](a/b.go)", "a/b.go"},
		{"code in link", "[`f()`](https://x.test)", `<a href="https://x.test">f()</a>`},
		{"bold link", "**see [b](https://x.test)**", `<b>see </b><a href="https://x.test"><b>b</b></a>`},
		{"bold code", "**run `make` now**", "<b>run </b><code>make</code><b> now</b>"},
		{"quoted bold code", "> *a `b`*", "<blockquote><i>a </i><code>b</code></blockquote>"},
		{"image", "![chart](https://x.test/c.png)", `<a href="https://x.test/c.png">chart</a>`},
		{"autolink", "<https://x.test/a>", "https://x.test/a"},
		{"quote", "> quoted **b**\n> more", "<blockquote>quoted <b>b</b>\nmore</blockquote>"},
		{"nested quote", "> a\n>\n> > b", "<blockquote>a\n\nb</blockquote>"},
		{"quote with code", "> ```\n> x\n> ```", "<blockquote><pre>x</pre></blockquote>"},
		{"bullets", "- one\n- two\n  - nested\n    - deeper", "• one\n• two\n  ◦ nested\n    ▪ deeper"},
		{"ordered", "3. c\n4. d", "3. c\n4. d"},
		{"ordered paren", "1) a\n2) b", "1) a\n2) b"},
		{"item with lines", "- first\n  second\n\n  para", "• first\n  second\n\n  para"},
		{"item with code", "- run:\n  ```sh\n  make\n  ```", "• run:\n  <pre><code class=\"language-sh\">make</code></pre>"},
		{"task list", "- [ ] todo\n- [x] done", "• ☐ todo\n• ☑ done"},
		{"table", "| a | bb |\n|---|---:|\n| 1 | 2 |", "<pre>a │ bb\n──┼───\n1 │  2</pre>"},
		{"rule", "a\n\n---\n\nb", "a\n\n────────────────────\n\nb"},
		{"raw inline html", "a <div>b</div> c", "a &lt;div&gt;b&lt;/div&gt; c"},
		{"comment", "a <!-- c -->\n\n<!-- d -->\n\nb", "a \n\nb"},
		{"br", "a<br>b", "a\nb"},
		{"html block", "<details>\n<summary>s</summary>\n</details>", "&lt;details&gt;\n&lt;summary&gt;s&lt;/summary&gt;\n&lt;/details&gt;"},
		{"entities and escapes", `&amp; &copy; &#x41; \*not\* \<b\>`, "&amp; © A *not* &lt;b&gt;"},
		{"hard break", "a  \nb\\\nc", "a\nb\nc"},
		{"invalid utf-8", "a\xffb", "a\ufffdb"},
		{"unbalanced bold", "**open and `tick", "**open and `tick"},
		{"unclosed fence", "text\n```go\ncode <x>", "text\n\n<pre><code class=\"language-go\">code &lt;x&gt;</code></pre>"},
		{"stray closers", "a** b__ c~~ ]() <", "a** b__ c~~ ]() &lt;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.in)
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("Split(%q) =\n%q\nwant\n%q", tc.in, got, tc.want)
			}
			if _, _, err := faketelegram.ParseText(got[0], "HTML"); err != nil {
				t.Fatalf("Telegram refuses %q: %v", got[0], err)
			}
		})
	}
}

// Only links Telegram may open safely are links: http and https with a
// host, mailto, and tg links that name no user (tg://user would mention,
// and notify, that user). Any other is shown as its text and destination.
func TestSplitLinksOnlySafeDestinations(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[a](https://x.test/p)", `<a href="https://x.test/p">a</a>`},
		{"[a](HTTP://x.test)", `<a href="HTTP://x.test">a</a>`},
		{"[a](mailto:me@x.test)", `<a href="mailto:me@x.test">a</a>`},
		{"[a](tg://resolve?domain=x)", `<a href="tg://resolve?domain=x">a</a>`},
		{"[me](tg://user?id=42)", "me (tg://user?id=42)"},
		{"[me](TG://User?id=42)", "me (TG://User?id=42)"},
		{"[me](tg:user?id=42)", "me (tg:user?id=42)"},
		{"[me](tg://openmessage?user_id=42)", "me (tg://openmessage?user_id=42)"},
		{"[x](javascript:alert(1))", "x (javascript:alert(1))"},
		{"[x](file:///etc/passwd)", "x (file:///etc/passwd)"},
		{"[x](https:///nohost)", "x (https:///nohost)"},
		{"[x](//x.test/p)", "x (//x.test/p)"},
		{"text\n\n[a/b.go](a/b.go)", "text\n\na/b.go"},
		{"![img](data:image/png;base64,AAAA)", "img (data:image/png;base64,AAAA)"},
	} {
		got := Split(tc.in)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Telegram has no allowed_mentions: a reply that writes @name would notify
// that member of the group. A word joiner after the @ keeps Telegram from
// seeing a mention, outside code, where the text is left as written.
func TestSplitMentionsNoOne(t *testing.T) {
	in := "@alice, ask (@bob_2) or **@carol**; mail a@b.test; `@dave` stays\n\n```\n@erin\n```"
	want := "@\u2060alice, ask (@\u2060bob_2) or <b>@\u2060carol</b>; mail a@b.test; <code>@dave</code> stays\n\n<pre>@erin</pre>"
	got := Split(in)
	if len(got) != 1 || got[0] != want {
		t.Fatalf("Split(%q) =\n%q\nwant\n%q", in, got, want)
	}
	if _, ents, err := faketelegram.ParseText(got[0], "HTML"); err != nil || len(ents) != 3 {
		t.Fatalf("Telegram reads %v %v", ents, err)
	}
}

// Control characters (which Telegram turns into spaces or refuses),
// bidirectional overrides and isolates (which make text read other than it
// is) and the three combining marks Telegram deletes are dropped; line
// separators become line breaks.
func TestSplitDropsControlAndBidiCharacters(t *testing.T) {
	in := "a\x00b\x07c\u202ed\u2066e\u2069\r\nf\u2028g\x1b[31mh\u0085i\u030aj\u0333k\u033fl"
	want := "a\ufffdbcde\nf\ng[31mhijkl"
	if got := Split(in); len(got) != 1 || got[0] != want {
		t.Fatalf("Split(%q) = %q, want %q", in, got, want)
	}
}

// Split may run for several chats at once.
func TestSplitConcurrently(t *testing.T) {
	in := "# h\n\n**b** [l](https://x.test) `c`\n\n```go\nx\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"
	want := Split(in)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := Split(in); !reflect.DeepEqual(got, want) {
					t.Errorf("Split differs when run concurrently: %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSplitEmpty(t *testing.T) {
	for _, in := range []string{"", "   \n\n\t", "<!-- -->\n", "[ref]: https://x.test", "\u030a\u0333\u033f"} {
		if got := Split(in); got != nil {
			t.Errorf("Split(%q) = %q, want no chunks", in, got)
		}
	}
}

func TestEscape(t *testing.T) {
	in := "<b>R&D</b> \"q\" 'a' \xff"
	want := "&lt;b&gt;R&amp;D&lt;/b&gt; &quot;q&quot; 'a' \ufffd"
	if got := Escape(in); got != want {
		t.Fatalf("Escape(%q) = %q, want %q", in, got, want)
	}
	text, ents, err := faketelegram.ParseText(want, "HTML")
	if err != nil || ents != nil || text != "<b>R&D</b> \"q\" 'a' \ufffd" {
		t.Fatalf("Telegram reads %q as %q %v %v", want, text, ents, err)
	}
	// Safe inside an attribute too.
	attr := `<a href="https://x.test/?q=` + Escape(`"><i>`) + `">x</a>`
	if _, ents, err := faketelegram.ParseText(attr, "HTML"); err != nil || !reflect.DeepEqual(ents, []faketelegram.Entity{{Type: "text_link", Length: 1, URL: `https://x.test/?q="><i>`}}) {
		t.Fatalf("attribute %q: %v %v", attr, ents, err)
	}
	if got := Escape("&amp;"); got != "&amp;amp;" {
		t.Fatalf("Escape(%q) = %q: an entity in plain text is text", "&amp;", got)
	}
}
