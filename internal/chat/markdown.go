package chat

import (
	"regexp"
	"strings"
	"sync"

	"github.com/mattn/go-runewidth"
)

// Markdown rewrites the Markdown Discord does not render into what it
// does: a table becomes an aligned monospace block (wide characters and
// emoji count two cells), headings deeper than ### become bold lines (or
// ### when they hold stars),
// task-list boxes become ☐ and ☑, and a horizontal rule becomes a line of
// box-drawing characters. Fenced code blocks (``` or ~~~, of any length)
// are left exactly as they are.
func Markdown(text string) string {
	if !strings.ContainsAny(text, "|#[-*_") {
		return text // nothing to convert: the common short reply
	}
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	open := "" // the fence run of the code block we are in (fence.go)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if run, _ := fenceRun(line); run != "" || open != "" {
			open = nextFence(open, line)
			out = append(out, line)
			continue
		}
		if n := tableAt(lines, i); n > 0 {
			out = append(out, renderTable(lines[i:i+n])...)
			i += n - 1
			continue
		}
		out = append(out, convertLine(line))
	}
	return strings.Join(out, "\n")
}

// The line patterns compile on first use (the hooks import this package).
var (
	deepHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}#{4,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`) })
	taskItem    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\s*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[([ xX])\]([ \t]|$)`)
	})
	rule = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	})
	delimCell = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^:?-+:?$`) })
)

// ruleLine is what a horizontal rule becomes.
const ruleLine = "────────────────────"

func convertLine(line string) string {
	if m := deepHeading().FindStringSubmatch(line); m != nil {
		switch {
		case strings.TrimSpace(m[1]) == "":
			return ""
		case strings.Contains(m[1], "*"):
			return "### " + m[1] // bold around stars would not render
		}
		return "**" + m[1] + "**"
	}
	if rule().MatchString(line) {
		return ruleLine
	}
	if m := taskItem().FindStringSubmatchIndex(line); m != nil {
		box := "☐"
		if line[m[4]:m[5]] != " " {
			box = "☑"
		}
		return line[:m[3]] + box + line[m[5]+1:]
	}
	return line
}

// tableAt returns how many lines the table starting at lines[i] has (a
// header row, a delimiter row with as many cells, body rows up to a blank
// line or a line without a pipe), or 0 when none starts there.
func tableAt(lines []string, i int) int {
	if i+1 >= len(lines) || !strings.Contains(lines[i], "|") {
		return 0
	}
	head, delim := splitRow(lines[i]), splitRow(lines[i+1])
	if len(head) != len(delim) {
		return 0
	}
	for _, c := range delim {
		if !delimCell().MatchString(c) {
			return 0
		}
	}
	if len(head) == 1 && !strings.Contains(lines[i+1], "|") {
		return 0 // "text" over "---" is a setext heading, not a table
	}
	n := 2
	for i+n < len(lines) && strings.TrimSpace(lines[i+n]) != "" && strings.Contains(lines[i+n], "|") && nextFence("", lines[i+n]) == "" {
		n++
	}
	return n
}

// splitRow splits a table row into its trimmed cells: an outer pipe at
// either end is dropped, and an escaped \| is a pipe inside a cell.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

type align int

const (
	alignLeft align = iota
	alignRight
	alignCenter
)

// renderTable draws a table as a code block whose columns line up in a
// monospace font.
func renderTable(lines []string) []string {
	head := splitRow(lines[0])
	aligns := make([]align, len(head))
	for c, d := range splitRow(lines[1]) {
		switch {
		case strings.HasPrefix(d, ":") && strings.HasSuffix(d, ":") && len(d) > 1:
			aligns[c] = alignCenter
		case strings.HasSuffix(d, ":"):
			aligns[c] = alignRight
		}
	}
	rows := [][]string{head}
	for _, l := range lines[2:] {
		rows = append(rows, splitRow(l))
	}
	widths := make([]int, len(head))
	for r, row := range rows {
		row = append(row, make([]string, max(len(head)-len(row), 0))...)[:len(head)] // GFM: pad or drop cells
		for c := range row {
			row[c] = plainCell(row[c])
			widths[c] = max(widths[c], cellWidth(row[c]))
		}
		rows[r] = row
	}
	out := []string{"```"}
	for r, row := range rows {
		cells := make([]string, len(row))
		for c, s := range row {
			cells[c] = pad(s, widths[c], aligns[c])
		}
		out = append(out, strings.TrimRight(strings.Join(cells, " │ "), " "))
		if r == 0 {
			seps := make([]string, len(widths))
			for c, w := range widths {
				seps[c] = strings.Repeat("─", w)
			}
			out = append(out, strings.Join(seps, "─┼─"))
		}
	}
	return append(out, "```")
}

// plainCell strips the inline Markdown a code block would show as is:
// code spans (whose backticks could also end the block), bold, line
// breaks and backslash escapes.
func plainCell(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	s = strings.ReplaceAll(s, "**", "")
	for _, br := range []string{"<br>", "<br/>", "<br />"} {
		s = strings.ReplaceAll(s, br, " ")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\*_~[]()#+-.!<>", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// widthCond measures as Discord's monospace font draws: East Asian wide
// characters and emoji take two cells, ambiguous ones one, whatever the
// locale of the machine we run on.
var widthCond = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// cellWidth is how many monospace cells s takes. A character followed by
// the emoji variation selector (⚠️) is drawn as an emoji: two cells.
func cellWidth(s string) int {
	w := widthCond.StringWidth(s)
	prev := rune(0)
	for _, r := range s {
		if r == '\uFE0F' && prev != 0 && widthCond.RuneWidth(prev) == 1 {
			w++
		}
		prev = r
	}
	return w
}

func pad(s string, w int, a align) string {
	gap := max(w-cellWidth(s), 0)
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + s
	case alignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}
