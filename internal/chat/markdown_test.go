package chat

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// columnStops is where, in monospace cells, each column separator of a
// converted table line sits.
func columnStops(line string) []int {
	var stops []int
	for i, r := range line {
		if r == '│' || r == '┼' {
			stops = append(stops, cellWidth(line[:i]))
		}
	}
	return stops
}

// checkAligned asserts that a converted table's separators line up on
// every line, counting wide characters and emoji as two cells.
func checkAligned(t *testing.T, block string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) < 4 || lines[0] != "```" || lines[len(lines)-1] != "```" {
		t.Fatalf("not a code block:\n%s", block)
	}
	want := columnStops(lines[2])
	for _, l := range lines[1 : len(lines)-1] {
		if got := columnStops(l); len(got) != len(want) || !equalInts(got, want) {
			t.Errorf("columns do not line up: %v vs %v in\n%s", got, want, block)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMarkdownTableCorpus(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"ascii with alignment colons",
			"Prices:\n\n| Name | Qty | Price |\n|:-----|:---:|------:|\n| apple | 3 | 1.50 |\n| banana | 12 | 0.25 |\n\nDone.",
			"Prices:\n\n```\nName   │ Qty │ Price\n───────┼─────┼──────\napple  │  3  │  1.50\nbanana │ 12  │  0.25\n```\n\nDone."},
		{"cjk counts two cells",
			"| 名前 | 説明 |\n|---|---|\n| 東京 | 日本の首都 |\n| NYC | city |",
			"```\n名前 │ 説明\n─────┼───────────\n東京 │ 日本の首都\nNYC  │ city\n```"},
		{"emoji count two cells",
			"| Status | Check |\n| --- | --- |\n| ✅ | pass |\n| ⚠️ | warn |\n| 👍🏽 | ok |",
			"```\nStatus │ Check\n───────┼──────\n✅     │ pass\n⚠️     │ warn\n👍🏽     │ ok\n```"},
		{"escaped pipes stay in their cell",
			"| Expr | Meaning |\n|---|---|\n| `a \\| b` | a or b |\n| x | y |",
			"```\nExpr  │ Meaning\n──────┼────────\na | b │ a or b\nx     │ y\n```"},
		{"no outer pipes, missing and extra cells",
			"a | b\n--|--\n1 |\n2 | 3 | 4\nprose after",
			"```\na │ b\n──┼──\n1 │\n2 │ 3\n```\nprose after"},
		{"bold and code in cells",
			"| **Key** | `value` |\n|---|---|\n| **x** | `y` |",
			"```\nKey │ value\n────┼──────\nx   │ y\n```"},
	}
	for _, c := range cases {
		got := Markdown(c.in)
		if got != c.want {
			t.Errorf("%s:\n got\n%s\n want\n%s", c.name, got, c.want)
			continue
		}
		start := strings.Index(got, "```")
		checkAligned(t, got[start:strings.LastIndex(got, "```")+3])
	}
}

func TestMarkdownLeavesCodeBlocksAlone(t *testing.T) {
	for _, in := range []string{
		"```\n| a | b |\n|---|---|\n| 1 | 2 |\n```",
		"Look:\n```markdown\n#### deep\n- [ ] box\n---\n| a | b |\n|:-|-:|\n```\nafter",
		"```go\nx := a | b\n// ----\n```",
		"plain text with a pipe | here\nand no table",
		"text\n---", // a setext heading underline stays a rule, not a table
	} {
		got := Markdown(in)
		if strings.Contains(in, "```") && got != in {
			t.Errorf("code block changed:\n%s\n→\n%s", in, got)
		}
		if strings.Contains(got, "│") {
			t.Errorf("a table was drawn from:\n%s\n→\n%s", in, got)
		}
	}
	// Outside the block, the same text is converted.
	in := "```\n| a | b |\n|---|---|\n```\n| a | b |\n|---|---|\n| 1 | 2 |"
	if got := Markdown(in); !strings.HasPrefix(got, "```\n| a | b |\n|---|---|\n```\n```\na │ b\n") {
		t.Errorf("got\n%s", got)
	}
}

func TestMarkdownHeadingsTasksRules(t *testing.T) {
	for in, want := range map[string]string{
		"#### Deep heading":           "**Deep heading**",
		"###### Deepest ##":           "**Deepest**",
		"### Kept":                    "### Kept",
		"# Top":                       "# Top",
		"- [ ] todo":                  "- ☐ todo",
		"- [x] done":                  "- ☑ done",
		"  * [X] nested done":         "  * ☑ nested done",
		"1. [ ] first":                "1. ☐ first",
		"- [link](http://x)":          "- [link](http://x)",
		"---":                         ruleLine,
		"***":                         ruleLine,
		"_ _ _":                       ruleLine,
		"--":                          "--",
		"- item":                      "- item",
		"**bold**":                    "**bold**",
		"a\n\n#### b\n- [ ] c\n\n***": "a\n\n**b**\n- ☐ c\n\n" + ruleLine,
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestChunkKeepsATableWhole: a converted table that fits in a message is
// never split across two.
func TestChunkKeepsATableWhole(t *testing.T) {
	var tb strings.Builder
	tb.WriteString("| Host | Status | Latency |\n|:--|:-:|--:|\n")
	for i := range 36 {
		tb.WriteString("| server-" + strings.Repeat("x", i%7) + " | ✅ up | " + strings.Repeat("9", 1+i%3) + " ms |\n")
	}
	table := strings.TrimSpace(Markdown(tb.String()))
	if n := utf8.RuneCountInString(table); n > Limit || n < 1200 {
		t.Fatalf("table of %d characters", n)
	}
	for _, before := range []int{300, 600, 900, 1200, 1700, 1990} {
		text := strings.Repeat("word ", before/5) + "\n\n" + table + "\n\n" + strings.Repeat("That is all. ", 60)
		chunks := Chunk(text, Limit)
		checkChunks(t, text, chunks, Limit)
		whole := 0
		for _, c := range chunks {
			if strings.Contains(c, table) {
				whole++
			}
		}
		if whole != 1 {
			t.Errorf("%d words before: the table is split across chunks:\n%q", before/5, chunks)
		}
	}
}

func FuzzMarkdown(f *testing.F) {
	f.Add("| a | b |\n|---|:-:|\n| 日本 | 😀 |")
	f.Add("```\n| a |\n|---|\n```\n#### x\n- [ ] y\n---")
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		out := Markdown(text)
		if strings.Count(text, "```")%2 == 0 && strings.Count(out, "```")%2 != 0 {
			t.Fatalf("fences unbalanced: %q → %q", text, out)
		}
		if again := Markdown(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", text, out, again)
		}
		for _, c := range Chunk(out, Limit) {
			if utf8.RuneCountInString(c) > Limit || strings.TrimSpace(c) == "" {
				t.Fatalf("bad chunk %q", c)
			}
		}
	})
}

// sampleReply is a 2,000-character reply of the kind Claude writes: prose,
// a table, a task list, a code block.
func sampleReply() string {
	var b strings.Builder
	b.WriteString("## Results\n\nI ran the suite on every target; here is the summary.\n\n")
	b.WriteString("| Target | Result | Time | Notes |\n|:--|:-:|--:|:--|\n")
	for i := 0; b.Len() < 1200; i++ {
		b.WriteString("| linux-amd64-" + strings.Repeat("x", i%5) + " | ✅ pass | 1" + strings.Repeat("2", i%3) + " s | 日本語 \\| ok |\n")
	}
	b.WriteString("\n#### Next steps\n- [x] fix the flaky test\n- [ ] update the docs\n\n---\n\n```go\nfunc main() { fmt.Println(\"| a | b |\") }\n```\n")
	for utf8.RuneCountInString(b.String()) < 2000 {
		b.WriteString("More prose. ")
	}
	return string([]rune(b.String())[:2000])
}

func BenchmarkMarkdown2000(b *testing.B) {
	text := sampleReply()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Markdown(text)
	}
}
