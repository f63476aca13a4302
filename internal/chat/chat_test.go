package chat

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkChunks asserts the invariants every chunking must keep: the limit,
// balanced fences in each chunk, and nothing lost or reordered.
func checkChunks(t *testing.T, text string, chunks []string, limit int) {
	t.Helper()
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c); n > limit {
			t.Errorf("chunk %d has %d characters", i, n)
		}
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("chunk %d has unbalanced fences:\n%s", i, c)
		}
	}
	strip := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r != ' ' && r != '\n' && r != '`' {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	var joined strings.Builder
	for _, c := range chunks {
		joined.WriteString(c)
	}
	// Fence lines are added at cuts; language tags reappear with them.
	got := strip(joined.String())
	want := strip(text)
	if !strings.Contains(got, want) && stripLangs(got) != stripLangs(want) {
		t.Errorf("text lost or reordered:\n got  %.200q\n want %.200q", got, want)
	}
}

func stripLangs(s string) string { return strings.ReplaceAll(s, "python", "") }

func TestChunkShortTextIsOnePiece(t *testing.T) {
	if got := Chunk("  hello\n", Limit); !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("Chunk = %q", got)
	}
	if got := Chunk("   ", Limit); got != nil {
		t.Fatalf("Chunk of blanks = %q", got)
	}
}

func TestChunkPrefersParagraphsThenLinesThenWords(t *testing.T) {
	para := strings.Repeat("a", 60) + "\n\n" + strings.Repeat("b", 30)
	if got := Chunk(para, 80); len(got) != 2 || got[0] != strings.Repeat("a", 60) {
		t.Errorf("paragraph cut: %q", got)
	}
	lines := strings.Repeat("a", 50) + "\n" + strings.Repeat("b", 50)
	if got := Chunk(lines, 80); len(got) != 2 || got[1] != strings.Repeat("b", 50) {
		t.Errorf("line cut: %q", got)
	}
	words := strings.Repeat("word ", 30)
	for _, c := range Chunk(words, 80) {
		if strings.HasPrefix(c, "ord") || strings.HasSuffix(c, "wor") {
			t.Errorf("cut inside a word: %q", c)
		}
	}
}

func TestChunkKeepsFencesBalanced(t *testing.T) {
	var b strings.Builder
	b.WriteString("Here is the code:\n\n```python\n")
	for i := range 300 {
		b.WriteString("print('line " + strings.Repeat("x", i%40) + "')\n")
	}
	b.WriteString("```\n\nAnd some prose after it.\n\n```\nplain block\n```\n")
	text := b.String()
	chunks := Chunk(text, Limit)
	if len(chunks) < 4 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	checkChunks(t, text, chunks, Limit)
	if !strings.HasPrefix(chunks[1], "```python\n") {
		t.Errorf("second chunk does not reopen the fence with its language:\n%.80s", chunks[1])
	}
}

func TestChunkUnicodeCountsCharacters(t *testing.T) {
	text := strings.Repeat("日本語😀 ", 1000)
	chunks := Chunk(text, Limit)
	checkChunks(t, text, chunks, Limit)
	for _, c := range chunks {
		if !utf8.ValidString(c) {
			t.Fatal("chunk cut inside a rune")
		}
	}
}

func FuzzChunk(f *testing.F) {
	f.Add("```go\nfunc main() {}\n```\n\ntext", 50)
	f.Add(strings.Repeat("x", 500), 20)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit < 20 || limit > 3000 || !utf8.ValidString(text) {
			return
		}
		for _, c := range Chunk(text, limit) {
			if utf8.RuneCountInString(c) > limit {
				t.Fatalf("chunk over the limit: %d > %d", utf8.RuneCountInString(c), limit)
			}
			if strings.TrimSpace(c) == "" {
				t.Fatalf("blank chunk in %q", text)
			}
		}
	})
}

func TestAttachMarkers(t *testing.T) {
	clean, names := AttachMarkers("Done. [DISCORD_ATTACH: out.txt]\nAlso [DISCORD_ATTACH:  ../../etc/passwd ] and [DISCORD_ATTACH: out.txt]")
	if clean != "Done.\nAlso  and" || !slices.Equal(names, []string{"out.txt", "../../etc/passwd"}) {
		t.Fatalf("clean=%q names=%q", clean, names)
	}
}

func TestIDRoundTrip(t *testing.T) {
	id := ID{Instance: "a1b2c3", Kind: "key", Args: []string{"home-api", "Enter"}}
	s, err := id.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeID(s)
	if err != nil || back.Instance != id.Instance || back.Kind != id.Kind || !slices.Equal(back.Args, id.Args) {
		t.Fatalf("round trip %q → %+v, %v", s, back, err)
	}
	for _, bad := range []ID{{Instance: "", Kind: "k"}, {Instance: "i", Kind: "k", Args: []string{"a|b"}}, {Instance: strings.Repeat("i", 100), Kind: "k"}} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("Encode(%+v) succeeded", bad)
		}
	}
	for _, bad := range []string{"", "yes", "cb2|i|k", "cb1||k", "cb1|i|k|a b"} {
		if _, err := DecodeID(bad); err == nil {
			t.Errorf("DecodeID(%q) succeeded", bad)
		}
	}
}

// Long but valid names (64-character server and project names make a
// thread's session key of 150) are hashed to fit in 100 characters, and
// still match the key they stand for, and only it.
func TestLongIDArgsAreHashedToFit(t *testing.T) {
	key := strings.Repeat("s", 64) + "-" + strings.Repeat("p", 64) + "-t1300000000000000123"
	other := strings.Repeat("s", 64) + "-" + strings.Repeat("p", 64) + "-t1300000000000000124"
	mid := strings.Repeat("s", 24) + "-" + strings.Repeat("p", 30) + "-t1300000000000000123" // 102 in an id before
	for _, k := range []string{key, mid} {
		s, err := ID{Instance: "a1b2c3d4e5", Kind: "key", Args: []string{k, "Escape", "lz4c1h"}}.Encode()
		if err != nil || len(s) > MaxIDLen || s == "" {
			t.Fatalf("Encode = %q (%d), %v", s, len(s), err)
		}
		back, err := DecodeID(s)
		if err != nil || len(back.Args) != 3 || back.Args[1] != "Escape" || back.Args[2] != "lz4c1h" {
			t.Fatalf("decoded %q: %+v, %v", s, back, err)
		}
		if !ArgIs(back.Args[0], k) || ArgIs(back.Args[0], other) || ArgIs(back.Args[0], "") {
			t.Fatalf("arg %q does not stand for exactly %q", back.Args[0], k)
		}
	}
	if !ArgIs("home-api", "home-api") || ArgIs("home-api", "home-ap") {
		t.Fatal("short args are compared as they are")
	}
}

func FuzzDecodeID(f *testing.F) {
	f.Add("cb1|inst|key|home-api|Enter")
	f.Add("cb1|||")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := DecodeID(s)
		if err != nil {
			return
		}
		again, err := id.Encode()
		if err != nil || again != s {
			t.Fatalf("decoded %q but re-encoded %q, %v", s, again, err)
		}
	})
}

// TestChunkNeverEmitsABlankChunk: Discord refuses an empty message (50006),
// and a message of spaces is empty to it.
func TestChunkNeverEmitsABlankChunk(t *testing.T) {
	for _, text := range []string{
		"x" + strings.Repeat(" ", 3000) + "y",
		"x" + strings.Repeat(" ", 5000) + "y",
		"x\n" + strings.Repeat(" ", 4500),
		strings.Repeat(" \n", 3000) + "z",
		"a" + strings.Repeat("\t ", 2500) + "b",
	} {
		chunks := Chunk(text, Limit)
		for i, c := range chunks {
			if strings.TrimSpace(c) == "" {
				t.Errorf("%.10q…: chunk %d of %d is blank", text, i, len(chunks))
			}
		}
		if strings.Join(strings.Fields(strings.Join(chunks, " ")), "") != strings.Join(strings.Fields(text), "") {
			t.Errorf("%.10q…: text lost: %q", text, chunks)
		}
	}
}
