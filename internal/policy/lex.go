package policy

import "strings"

// lexer splits a command line into simple commands the way a POSIX shell
// tokenizes it, as far as a policy needs: quotes removed, control
// operators, redirections and heredocs recognised, the bodies of $(…),
// `…` and <(…) kept apart to be judged as commands of their own. It
// expands nothing: a word holding $ is marked dynamic.
type lexer struct {
	in     []rune
	i      int
	cmds   []simple
	subs   []string
	cur    simple
	word   strings.Builder
	inWord bool
	dyn    bool
	glob   bool
	redir  byte // '<' or '>' while the next word is a redirection target; 'h' a heredoc's delimiter
	// heredocs are the delimiters whose bodies start after this line;
	// strip, whether each was <<- (leading tabs removed).
	heredocs []string
	strip    []bool
	depth    int // open ( of subshells inside a $(…) being read
	nest     int // how many $(…) this lexer is inside
}

// maxNest bounds nested substitutions: deeper is called unjudgeable.
const maxNest = 16

// lex returns the simple commands of a command line and the bodies of its
// substitutions; ok is false for an unclosed quote or substitution.
func lex(cmd string) (cmds []simple, subs []string, ok bool) {
	l := &lexer{in: []rune(cmd)}
	if _, ok := l.run(false); !ok {
		return nil, nil, false
	}
	return l.cmds, l.subs, true
}

// run lexes from l.i to the end, or, with inner, to the ) that closes a
// $( whose body starts at l.i; it returns that )'s index.
func (l *lexer) run(inner bool) (int, bool) {
	for l.i < len(l.in) {
		c := l.in[l.i]
		switch {
		case c == ' ' || c == '\t':
			l.endWord()
		case c == '\\':
			if l.i+1 < len(l.in) && l.in[l.i+1] == '\n' {
				l.i++ // line continuation
				break
			}
			if l.i+1 < len(l.in) {
				l.i++
				l.add(l.in[l.i])
			}
		case c == '\'':
			j := l.i + 1
			for j < len(l.in) && l.in[j] != '\'' {
				j++
			}
			if j >= len(l.in) {
				return 0, false
			}
			l.inWord = true
			l.word.WriteString(string(l.in[l.i+1 : j]))
			l.i = j
		case c == '"':
			if !l.double() {
				return 0, false
			}
		case c == '`':
			if !l.backtick() {
				return 0, false
			}
		case c == '$' && l.peek(1) == '(':
			if !l.paren(2) {
				return 0, false
			}
		case (c == '<' || c == '>') && l.peek(1) == '(':
			l.endWord()
			if !l.paren(2) {
				return 0, false
			}
			l.endWord()
		case c == '$':
			l.dyn = true
			l.add(c)
		case c == '#' && !l.inWord:
			for l.i+1 < len(l.in) && l.in[l.i+1] != '\n' {
				l.i++
			}
		case c == '<' && l.peek(1) == '<' && l.peek(2) != '<':
			l.endWord()
			l.i++
			strip := l.peek(1) == '-'
			if strip {
				l.i++
			}
			l.redir = 'h'
			l.strip = append(l.strip, strip)
		case c == '>' || c == '<':
			if l.inWord && isDigits(l.word.String()) {
				l.word.Reset() // 2>file: the fd is not an argument
				l.inWord = false
			}
			l.endWord()
			l.redir = byte(c)
			for l.peek(1) == '>' || l.peek(1) == '<' || l.peek(1) == '|' || l.peek(1) == '&' {
				l.i++
			}
		case c == '&' && l.peek(1) == '>':
			l.endWord()
			l.redir = '>'
			l.i++
			if l.peek(1) == '>' {
				l.i++
			}
		case c == '(':
			l.depth++
			l.endCommand()
		case c == ')' && inner && l.depth == 0:
			l.endCommand()
			return l.i, true
		case c == ')':
			l.depth--
			l.endCommand()
		case c == '\n':
			l.endCommand()
			l.skipHeredocs()
		case c == ';' || c == '&' || c == '|':
			l.endCommand()
		default:
			if c == '*' || c == '?' || c == '[' {
				l.glob = true
			}
			l.add(c)
		}
		l.i++
	}
	l.endCommand()
	if inner {
		return 0, false
	}
	return l.i, true
}

func (l *lexer) peek(n int) rune {
	if l.i+n < len(l.in) {
		return l.in[l.i+n]
	}
	return 0
}

func (l *lexer) add(c rune) {
	l.inWord = true
	l.word.WriteRune(c)
}

// skipHeredocs skips the bodies of the heredocs opened on the line that
// just ended (l.i is at its newline): their text is data, not commands.
// A body without its delimiter runs to the end, as in bash.
func (l *lexer) skipHeredocs() {
	for k, delim := range l.heredocs {
		for l.i < len(l.in) {
			start := l.i + 1
			end := start
			for end < len(l.in) && l.in[end] != '\n' {
				end++
			}
			line := string(l.in[start:end])
			if l.strip[k] {
				line = strings.TrimLeft(line, "\t")
			}
			l.i = end
			if line == delim {
				break
			}
		}
	}
	l.heredocs, l.strip = nil, nil
}

// double reads a double-quoted string: \ escapes ", \, $ and `; $(…)
// and `…` inside are substitutions.
func (l *lexer) double() bool {
	l.inWord = true
	for l.i++; l.i < len(l.in); l.i++ {
		c := l.in[l.i]
		switch {
		case c == '"':
			return true
		case c == '\\' && strings.ContainsRune("\"\\$`\n", l.peek(1)):
			l.i++
			l.word.WriteRune(l.in[l.i])
		case c == '`':
			if !l.backtick() {
				return false
			}
		case c == '$' && l.peek(1) == '(':
			if !l.paren(2) {
				return false
			}
		case c == '$':
			l.dyn = true
			l.word.WriteRune(c)
		default:
			l.word.WriteRune(c)
		}
	}
	return false
}

// backtick reads `…` as a substitution.
func (l *lexer) backtick() bool {
	j := l.i + 1
	for j < len(l.in) && l.in[j] != '`' {
		if l.in[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(l.in) {
		return false
	}
	l.subs = append(l.subs, string(l.in[l.i+1:j]))
	l.inWord, l.dyn = true, true
	l.word.WriteString("$()")
	l.i = j
	return true
}

// paren reads the body of $(…) (or <(…)), which starts skip runes on, with
// a lexer of its own: quotes, heredocs and nested substitutions inside it
// are what decide where it ends.
func (l *lexer) paren(skip int) bool {
	start := l.i + skip
	if l.nest >= maxNest {
		return false
	}
	sub := &lexer{in: l.in, i: start, nest: l.nest + 1}
	end, ok := sub.run(true)
	if !ok {
		return false
	}
	l.subs = append(l.subs, string(l.in[start:end]))
	l.inWord, l.dyn = true, true
	l.word.WriteString("$()")
	l.i = end
	return true
}

func (l *lexer) endWord() {
	if !l.inWord {
		return
	}
	w := l.word.String()
	switch l.redir {
	case '>':
		l.cur.writes = append(l.cur.writes, w)
	case '<':
		l.cur.reads = append(l.cur.reads, w)
	case 'h':
		l.heredocs = append(l.heredocs, w)
	default:
		l.cur.words = append(l.cur.words, w)
		l.cur.dyn = append(l.cur.dyn, l.dyn)
		l.cur.globs = append(l.cur.globs, l.glob)
	}
	l.word.Reset()
	l.inWord, l.dyn, l.glob, l.redir = false, false, false, 0
}

func (l *lexer) endCommand() {
	l.endWord()
	l.redir = 0
	if len(l.cur.words) > 0 || len(l.cur.writes) > 0 || len(l.cur.reads) > 0 {
		l.cmds = append(l.cmds, l.cur)
	}
	l.cur = simple{}
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
