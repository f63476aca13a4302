// Package chat is ccbridge's platform-neutral message layer: splitting long
// text into Discord-sized chunks with code fences kept balanced, the
// [DISCORD_ATTACH: name] markers of replies, and the custom_id codec of
// buttons. It imports no other internal package.
package chat

import (
	"strings"
	"unicode/utf8"
)

// Limit is Discord's maximum message length, in characters.
const Limit = 2000

// Chunk splits text into pieces of at most limit characters, cutting at a
// paragraph break, else a line break, else a space, else anywhere. A code
// fence open at a cut is closed at the end of its chunk and reopened, with
// its language, at the start of the next, so every chunk renders on its own.
// A code block (a converted table is one) that would be cut but fits a
// chunk on its own starts the next chunk instead. No chunk is blank.
func Chunk(text string, limit int) []string {
	text = strings.TrimSpace(text)
	var chunks []string
	fence := "" // the fence line carried into the next chunk, e.g. "```go"
	for text != "" {
		prefix := ""
		if fence != "" {
			prefix = fence + "\n"
		}
		if last := closeFence(prefix+text, openFence(fence, text)); utf8.RuneCountInString(last) <= limit {
			if strings.TrimSpace(text) != "" {
				chunks = append(chunks, last)
			}
			break
		}
		// Leave room for a closing fence in case the piece ends inside one.
		run, _ := fenceRun(fence)
		budget := max(limit-utf8.RuneCountInString(prefix)-1-max(len(run), len("````")), 1)
		piece, rest := cut(text, budget)
		if fence == "" && openFence("", piece) != "" {
			piece, rest = keepBlock(text, piece, rest, limit)
		}
		fence = openFence(fence, piece)
		// Discord refuses a blank message: a run of spaces longer than a
		// chunk is dropped, not sent.
		if strings.TrimSpace(piece) != "" {
			chunks = append(chunks, closeFence(prefix+piece, fence))
		}
		text = strings.TrimLeft(rest, "\n")
	}
	return chunks
}

// closeFence appends a closing fence when one is open: the open fence's
// run (fence.go).
func closeFence(body, open string) string {
	if open == "" {
		return body
	}
	run, _ := fenceRun(open)
	return body + "\n" + run
}

// cut takes at most n characters from text at the best boundary.
func cut(text string, n int) (piece, rest string) {
	if utf8.RuneCountInString(text) <= n {
		return text, ""
	}
	end := byteIndexOfRune(text, n)
	window := text[:end]
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(window, sep); i > 0 && i >= end/2 {
			return strings.TrimRight(window[:i], " \n"), text[i+len(sep):]
		}
	}
	return window, text[end:]
}

func byteIndexOfRune(s string, n int) int {
	i := 0
	for pos := range s {
		if i == n {
			return pos
		}
		i++
	}
	return len(s)
}

// openFence returns the fence line still open after piece, given the fence
// open before it ("" = none).
func openFence(open, piece string) string {
	run, _ := fenceRun(open)
	for line := range strings.SplitSeq(piece, "\n") {
		was := run
		if run = nextFence(run, line); run == "" {
			open = ""
		} else if was == "" {
			open = fenceLine(line)
		}
	}
	return open
}

// fenceLine is the fence to reopen a block with: its run and its language
// tag only, so a long first line cannot eat a chunk's room.
func fenceLine(line string) string {
	run, lang := fenceRun(line)
	if i := strings.IndexAny(lang, " \t"); i >= 0 {
		lang = lang[:i]
	}
	if len(lang) > 10 {
		return run
	}
	for _, c := range lang {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("+#-_.", c)) {
			return run
		}
	}
	return run + lang
}

// keepBlock moves the cut of a piece that ends inside a code block to just
// before the block, or just after it when the block opens the piece, if
// the block fits in one chunk; otherwise the cut stays where it was.
func keepBlock(text, piece, rest string, limit int) (string, string) {
	start, open := -1, ""
	pos := 0
	for line := range strings.SplitSeq(piece, "\n") {
		was := open
		if open = nextFence(open, line); was == "" && open != "" {
			start = pos
		}
		pos += len(line) + 1
	}
	if open == "" || start < 0 {
		return piece, rest
	}
	// The block ends with its closing fence line, or with the text.
	end, closing := len(text), 1+len(open) // an unclosed block is closed at the cut
	pos = start
	for i, line := range strings.Split(text[start:], "\n") {
		if i > 0 && nextFence(open, line) == "" {
			end, closing = pos+len(line), 0
			break
		}
		pos += len(line) + 1
	}
	if utf8.RuneCountInString(text[start:end])+closing > limit {
		return piece, rest
	}
	if before := strings.TrimRight(text[:start], " \n"); before != "" {
		return before, text[start:]
	}
	return text[:end], text[end:]
}

// ChunkMasked splits text into messages of at most limit characters that
// stay within it after mask (a redactor) runs over each on its way out:
// it masks first and chunks the result, so a mask longer than what it
// hides cannot push a message over the limit. The chunks are masked
// already, and masking them again changes nothing.
func ChunkMasked(text string, limit int, mask func(string) string) []string {
	var out []string
	for _, c := range Chunk(mask(text), limit) {
		out = append(out, fitMasked(c, limit, mask)...)
	}
	return out
}

// fitMasked splits a chunk again, smaller, if its own masking makes it
// too long: a cut inside a line can start a new match (a key name that
// now begins a line).
func fitMasked(c string, limit int, mask func(string) string) []string {
	r := mask(c)
	n := utf8.RuneCountInString(r)
	if n <= limit {
		return []string{r}
	}
	var out []string
	for _, p := range Chunk(r, n/2) {
		out = append(out, fitMasked(p, limit, mask)...)
	}
	return out
}
