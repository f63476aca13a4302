package format

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// chunks cuts the document into messages, each within Telegram's limits.
func (d *doc) chunks() []string {
	var out []string
	for a := 0; a < len(d.text); {
		end := d.fit(a)
		next := end
		if end < len(d.text) {
			end, next = d.cut(a, end)
			end, next = d.keepBlock(a, end, next)
		}
		// Telegram trims a message; so does the chunk, to read as sent.
		from := a + len(d.text[a:end]) - len(strings.TrimLeft(d.text[a:end], " \t\n"))
		to := from + len(strings.TrimRight(d.text[from:end], " \t\n"))
		if visible(d.text[from:to]) {
			out = append(out, d.html(from, to))
		}
		a = next
	}
	return out
}

// fit returns the furthest end of a chunk starting at a that keeps within
// Telegram's limits: text, entities (each element open in the chunk is
// one), their size, and the HTML's size. It is always past a.
func (d *doc) fit(a int) int {
	var units, ents, entBytes, size int
	var prev []*tag
	for i := d.runAt(a); i < len(d.runs); i++ {
		rn := d.runs[i]
		for _, t := range rn.tags {
			if !hasTag(prev, t) {
				ents++
				entBytes += entityBytes + len(t.attr)
				size += len(t.open()) + len(t.close())
			}
		}
		prev = rn.tags
		from := max(a, rn.start)
		if ents > maxEntities || entBytes > maxEntityBytes || size > maxHTML {
			return d.past(a, from)
		}
		for j, c := range d.text[from:rn.end] {
			units += utf16.RuneLen(c)
			size += escapedLen(c)
			if units > MaxText || size > maxHTML {
				return d.past(a, from+j)
			}
		}
	}
	return len(d.text)
}

// past makes sure a chunk starting at a ends after its first character.
func (d *doc) past(a, end int) int {
	if end > a {
		return end
	}
	_, n := utf8.DecodeRuneInString(d.text[a:])
	return a + n
}

func hasTag(tags []*tag, t *tag) bool {
	for _, u := range tags {
		if u == t {
			return true
		}
	}
	return false
}

// cut chooses where a chunk from a that may reach lim ends (end) and where
// the next begins (next): at the last paragraph break in the window's
// second half, else a line break (one before a line that starts with no
// space first: Telegram trims a message's leading spaces, which would eat
// an indent), else a space, else between two characters.
func (d *doc) cut(a, lim int) (end, next int) {
	w := d.text[a:lim]
	half := max(len(w)/2, 1)
	if i := strings.LastIndex(w, "\n\n"); i >= half {
		return a + i, a + i + 2
	}
	for i := len(w) - 1; i >= half; i-- {
		if w[i] == '\n' && a+i+1 < len(d.text) && d.text[a+i+1] != ' ' && d.text[a+i+1] != '\t' {
			return a + i, a + i + 1
		}
	}
	for _, sep := range []byte{'\n', ' '} {
		if i := strings.LastIndexByte(w, sep); i >= half {
			return a + i, a + i + 1
		}
	}
	c := d.between(a, lim)
	return c, c
}

// between backs a cut at lim off from inside a character sequence drawn
// as one (a combining mark, an emoji's joiner, modifier or variation
// selector, a flag's second half), unless that leaves nothing before it.
func (d *doc) between(a, lim int) int {
	for c := lim; c > a && lim-c < 64; {
		r, _ := utf8.DecodeRuneInString(d.text[c:])
		p, n := utf8.DecodeLastRuneInString(d.text[a:c])
		if !joined(r) && p != '\u200D' && !(regional(r) && d.oddFlagHalves(a, c)) {
			return c
		}
		c -= n
	}
	return lim
}

func joined(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) || r == '\u200D' ||
		r >= 0xFE00 && r <= 0xFE0F || r >= 0x1F3FB && r <= 0x1F3FF || r >= 0xE0020 && r <= 0xE007F
}

func regional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// oddFlagHalves reports whether an odd number of regional indicators (flag
// halves, which pair from the left) runs up to c.
func (d *doc) oddFlagHalves(a, c int) bool {
	odd := false
	for c > a {
		p, n := utf8.DecodeLastRuneInString(d.text[a:c])
		if !regional(p) {
			break
		}
		odd = !odd
		c -= n
	}
	return odd
}

// keepBlock moves a cut that would split a code block to just before the
// block when the block does not start the chunk and fits a message on its
// own, so a short block is never split (as chat.Chunk does for Discord).
func (d *doc) keepBlock(a, end, next int) (int, int) {
	p := d.preAt(end - 1)
	if p == nil || next >= len(d.text) || d.preAt(next) != p {
		return end, next
	}
	start, stop := d.span(p)
	if start <= a || d.fit(start) < stop {
		return end, next
	}
	return start, start
}

// preAt returns the code block holding the byte at pos, or nil.
func (d *doc) preAt(pos int) *tag {
	if pos < 0 || pos >= len(d.text) {
		return nil
	}
	for _, t := range d.runs[d.runAt(pos)].tags {
		if t.kind == kPre {
			return t
		}
	}
	return nil
}

// span returns where the runs under t begin and end.
func (d *doc) span(t *tag) (start, stop int) {
	start = -1
	for _, rn := range d.runs {
		if hasTag(rn.tags, t) {
			if start < 0 {
				start = rn.start
			}
			stop = rn.end
		}
	}
	return start, stop
}

// runAt returns the index of the run holding the byte at pos.
func (d *doc) runAt(pos int) int {
	return sort.Search(len(d.runs), func(i int) bool { return d.runs[i].start > pos }) - 1
}

// html writes the text from a to end with its tags: those open at a are
// opened first, those open at end closed last.
func (d *doc) html(a, end int) string {
	var b strings.Builder
	var open []*tag
	for i := d.runAt(a); i < len(d.runs) && d.runs[i].start < end; i++ {
		rn := d.runs[i]
		from, to := max(a, rn.start), min(end, rn.end)
		if from >= to {
			continue
		}
		k := 0
		for k < len(open) && k < len(rn.tags) && open[k] == rn.tags[k] {
			k++
		}
		for j := len(open) - 1; j >= k; j-- {
			b.WriteString(open[j].close())
		}
		for _, t := range rn.tags[k:] {
			b.WriteString(t.open())
		}
		open = rn.tags
		for _, c := range d.text[from:to] {
			writeEscaped(&b, c)
		}
	}
	for j := len(open) - 1; j >= 0; j-- {
		b.WriteString(open[j].close())
	}
	return b.String()
}

// visible reports whether s shows anything once Telegram trims it.
func visible(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) }) >= 0
}
