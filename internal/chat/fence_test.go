package chat

import (
	"strings"
	"testing"
)

// The reviewer's reply (first contact 2, §14): text, a ````md block that
// holds a ``` block, a plain table, and a table inside ~~~.
const fencedReply = "Here is the README section:\n" +
	"````md\n" +
	"Run it:\n" +
	"```sh\n" +
	"make test\n" +
	"```\n" +
	"| in | out |\n" +
	"|----|-----|\n" +
	"````\n" +
	"\n" +
	"| tier | time |\n" +
	"|------|------|\n" +
	"| unit | 1m   |\n" +
	"\n" +
	"~~~\n" +
	"| raw | table |\n" +
	"|-----|-------|\n" +
	"~~~"

// A table after a four-backtick fence that holds a three-backtick block is
// drawn; the blocks are left as they are, and no stray fence is added.
func TestMarkdownAfterAFourBacktickFence(t *testing.T) {
	got := Markdown(fencedReply)
	want := "Here is the README section:\n" +
		"````md\nRun it:\n```sh\nmake test\n```\n| in | out |\n|----|-----|\n````\n\n" +
		"```\ntier │ time\n─────┼─────\nunit │ 1m\n```\n\n" +
		"~~~\n| raw | table |\n|-----|-------|\n~~~"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	chunks := Chunk(got, Limit)
	if len(chunks) != 1 || chunks[0] != want {
		t.Errorf("chunked into %d:\n%s", len(chunks), strings.Join(chunks, "\n=====\n"))
	}
}

// A four-backtick block cut between chunks is closed and reopened with
// four backticks, so the three-backtick lines inside stay text.
func TestChunkKeepsALongerFence(t *testing.T) {
	body := strings.Repeat("line of the block\n", 30) + "```\ninner\n```\n" + strings.Repeat("more of the block\n", 30)
	text := "````md\n" + body + "````\nafter"
	chunks := Chunk(text, 400)
	for i, c := range chunks {
		opens := strings.Count(c, "\n````") + boolInt(strings.HasPrefix(c, "````"))
		if opens%2 != 0 {
			t.Errorf("chunk %d is unbalanced:\n%s", i, c)
		}
	}
	if last := chunks[len(chunks)-1]; !strings.HasSuffix(last, "````\nafter") {
		t.Errorf("last chunk:\n%s", last)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
