package policy

import "strings"

// lexer splits a command line into simple commands the way a POSIX shell
// tokenizes it, as far as a policy needs: quotes removed, control
// operators and redirections recognised, the bodies of $(…), `…` and
// <(…) kept apart to be judged as commands of their own. It expands
// nothing: a word holding $ is marked dynamic.
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
	redir  byte // '<' or '>' while the next word is a redirection target
}

// lex returns the simple commands of a command line and the bodies of its
// substitutions; ok is false for an unclosed quote or substitution.
func lex(cmd string) (cmds []simple, subs []string, ok bool) {
	l := &lexer{in: []rune(cmd)}
	if !l.run() {
		return nil, nil, false
	}
	return l.cmds, l.subs, true
}

func (l *lexer) run() bool {
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
				return false
			}
			l.inWord = true
			l.word.WriteString(string(l.in[l.i+1 : j]))
			l.i = j
		case c == '"':
			if !l.double() {
				return false
			}
		case c == '`':
			if !l.backtick() {
				return false
			}
		case c == '$' && l.peek(1) == '(':
			if !l.paren(l.i + 2) {
				return false
			}
		case (c == '<' || c == '>') && l.peek(1) == '(':
			l.endWord()
			if !l.paren(l.i + 2) {
				return false
			}
			l.endWord()
		case c == '$':
			l.dyn = true
			l.add(c)
		case c == '#' && !l.inWord:
			for l.i < len(l.in) && l.in[l.i] != '\n' {
				l.i++
			}
			continue
		case c == '>' || c == '<':
			if l.inWord && isDigits(l.word.String()) {
				l.word.Reset() // 2>file: the fd is not an argument
				l.inWord = false
			}
			l.endWord()
			l.redir = byte(c)
			for l.peek(1) == '>' || l.peek(1) == '|' || l.peek(1) == '&' {
				l.i++
			}
		case c == '&' && l.peek(1) == '>':
			l.endWord()
			l.redir = '>'
			l.i++
			if l.peek(1) == '>' {
				l.i++
			}
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '(' || c == ')':
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
	return true
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
			if !l.paren(l.i + 2) {
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

// paren reads a substitution body from start to its closing parenthesis.
func (l *lexer) paren(start int) bool {
	depth := 1
	j := start
	for ; j < len(l.in) && depth > 0; j++ {
		switch l.in[j] {
		case '(':
			depth++
		case ')':
			depth--
		case '\'':
			for j++; j < len(l.in) && l.in[j] != '\''; j++ {
			}
		case '\\':
			j++
		}
	}
	if depth > 0 {
		return false
	}
	l.subs = append(l.subs, string(l.in[start:j-1]))
	l.inWord, l.dyn = true, true
	l.word.WriteString("$()")
	l.i = j - 1
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
