package redact

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Screen masks the secrets of a terminal screen (a tmux capture). Claude
// Code's TUI wraps long lines itself, so a token can run over several
// screen lines that no line-by-line rule sees whole: Screen also looks at
// a de-wrapped copy, each run of non-blank lines joined without their
// indentation and borders, and masks every line a secret found there
// covers. Joining can only add masks, never remove one.
func Screen(s string) string {
	if off.Load() {
		return s
	}
	compileOnce.Do(compile)
	lines := strings.Split(s, "\n")
	// joined is the de-wrapped copy; at[i] is where line i's content
	// starts in it, and cs[i], ce[i] are that content's bounds in the line.
	var joined strings.Builder
	at, cs, ce := make([]int, len(lines)), make([]int, len(lines)), make([]int, len(lines))
	for i, l := range lines {
		cs[i], ce[i] = content(l)
		if cs[i] == ce[i] && joined.Len() > 0 {
			joined.WriteByte('\n') // a blank line ends a paragraph
		}
		at[i] = joined.Len()
		joined.WriteString(l[cs[i]:ce[i]])
	}
	// Each line's part of each secret.
	parts := make([][]named, len(lines))
	cover := func(f named, from, to int) {
		for i := from; i < to; i++ {
			a, z := max(f.a, at[i]), min(f.z, at[i]+ce[i]-cs[i])
			if a < z {
				parts[i] = append(parts[i], named{span{a - at[i] + cs[i], z - at[i] + cs[i]}, f.name})
			}
		}
	}
	text := joined.String()
	found := false
	for _, f := range wrappedSpans(text) {
		cover(f, 0, len(lines))
		found = true
	}
	// Rules for a key at the start of a line (key = value, key: value)
	// see a paragraph from each of its lines: the value may run over the
	// next few.
	keyed := lineRules()
	for i := range lines {
		if !keyStart(lines[i][cs[i]:ce[i]], keyed) {
			continue
		}
		end := i + 1
		for end < len(lines) && end-i < maxWrapped && cs[end] < ce[end] && cs[i] < ce[i] {
			end++
			para := text[at[i] : at[end-1]+ce[end-1]-cs[end-1]]
			for _, r := range keyed {
				if r.applies(para) {
					for _, sp := range r.spans(para) {
						cover(named{span{at[i] + sp.a, at[i] + sp.z}, r.name}, i, end)
						found = true
					}
				}
			}
		}
	}
	if !found {
		return String(s)
	}
	for i, p := range parts {
		if len(p) > 0 {
			lines[i] = maskNamed(lines[i], p)
		}
	}
	return String(strings.Join(lines, "\n"))
}

// maxWrapped is how many screen lines a value after a key at a line's
// start is looked for in.
const maxWrapped = 4

// keyStart reports whether a line starts a key's value that may go on
// over the next lines: it ends right after the key, or the shape of a
// rule anchored at its first word matches it (whatever the value's
// beginning looks like alone).
func keyStart(line string, keyed []*rule) bool {
	if strings.HasSuffix(line, "=") || strings.HasSuffix(line, ":") {
		return true
	}
	for i := 0; i < len(line); i++ {
		if !startsKey(line, i) || !firstToken(line[:i]) {
			continue
		}
		for _, r := range keyed {
			if r.re.MatchString(line[i:]) {
				return true
			}
		}
	}
	return false
}

// lineRules are the rules anchored at a line's first word.
func lineRules() []*rule {
	var out []*rule
	for i := range rules {
		if rules[i].lineKey {
			out = append(out, &rules[i])
		}
	}
	return out
}

// named is a span with the name of the rule that found it.
type named struct {
	span
	name string
}

// wrappedSpans finds every secret of text with every rule, as Find would
// on the original text, but without masking: spans, not text.
func wrappedSpans(text string) []named {
	var out []named
	mu.RLock()
	for _, v := range exact {
		for off := 0; ; {
			i := strings.Index(text[off:], v)
			if i < 0 {
				break
			}
			out = append(out, named{span{off + i, off + i + len(v)}, "bot token"})
			off += i + len(v)
		}
	}
	mu.RUnlock()
	for i := range rules {
		r := &rules[i]
		if r.block {
			if r.applies(text) {
				for _, sp := range r.spans(text) {
					out = append(out, named{sp, r.name})
				}
			}
			continue
		}
		for start := 0; start < len(text); {
			end := strings.IndexByte(text[start:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += start
			}
			if line := text[start:end]; r.applies(line) {
				for _, sp := range r.spans(line) {
					out = append(out, named{span{start + sp.a, start + sp.z}, r.name})
				}
			}
			start = end + 1
		}
	}
	return out
}

// maskNamed masks the parts of a line, merging those that overlap.
func maskNamed(line string, parts []named) string {
	slices.SortFunc(parts, func(x, y named) int { return x.a - y.a })
	var b strings.Builder
	last := 0
	for _, p := range parts {
		if p.z <= last {
			continue
		}
		if p.a < last {
			p.a = last
		} else {
			b.WriteString(line[last:p.a])
			b.WriteString(mask(p.name))
		}
		last = p.z
	}
	b.WriteString(line[last:])
	return b.String()
}

// content returns the bounds of a screen line's text, without the
// indentation, the borders and the marks the TUI draws around it.
func content(l string) (int, int) {
	a, z := 0, len(l)
	for a < z {
		r, n := utf8.DecodeRuneInString(l[a:])
		if !frame(r) {
			break
		}
		a += n
	}
	for z > a {
		r, n := utf8.DecodeLastRuneInString(l[a:z])
		if !frame(r) {
			break
		}
		z -= n
	}
	return a, z
}

// frame reports whether r is drawn by the TUI rather than part of the
// text: spaces, box drawing, and the markers of messages and results.
func frame(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x2500 && r <= 0x257f || strings.ContainsRune("⎿●•❯", r)
}
