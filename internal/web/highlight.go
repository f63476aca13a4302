package web

import (
	"bytes"
	"html"
	"html/template"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// maxHighlight bounds the text handed to the highlighter at once; past it a
// file or hunk is shown plain (a minified bundle would cost seconds).
const maxHighlight = 512 << 10

// lexerFor picks a lexer by file name, then by content, else plain text.
func lexerFor(name, text string) chroma.Lexer {
	l := lexers.Match(name)
	if l == nil && len(text) > 0 {
		l = lexers.Analyse(text[:min(len(text), 4096)])
	}
	if l == nil {
		l = lexers.Fallback
	}
	return chroma.Coalesce(l)
}

// highlightLines highlights text as the file name says and returns it line
// by line, each line's tokens as spans with chroma's CSS classes (never
// inline styles: the page's CSP allows none).
func highlightLines(name, text string) []template.HTML {
	return highlight(func() chroma.Lexer { return lexerFor(name, text) }, text)
}

// highlightCode highlights a Markdown code block by its info string's
// language; without one it stays plain.
func highlightCode(lang, text string) []template.HTML {
	return highlight(func() chroma.Lexer {
		if l := lexers.Get(lang); lang != "" && l != nil {
			return chroma.Coalesce(l)
		}
		return nil
	}, text)
}

func highlight(lexer func() chroma.Lexer, text string) []template.HTML {
	text = strings.TrimSuffix(text, "\n")
	var it chroma.Iterator
	if len(text) <= maxHighlight {
		if l := lexer(); l != nil {
			it, _ = l.Tokenise(nil, text)
		}
	}
	if it == nil {
		return plainLines(text)
	}
	var out []template.HTML
	var b bytes.Buffer
	for tok := it(); tok != chroma.EOF; tok = it() {
		parts := strings.Split(tok.Value, "\n")
		for i, p := range parts {
			if i > 0 {
				out = append(out, template.HTML(b.String())) //nolint:gosec // built from escaped tokens
				b.Reset()
			}
			if p == "" {
				continue
			}
			if cls := class(tok.Type); cls != "" {
				b.WriteString(`<span class="` + cls + `">` + html.EscapeString(p) + `</span>`)
			} else {
				b.WriteString(html.EscapeString(p))
			}
		}
	}
	out = append(out, template.HTML(b.String())) //nolint:gosec // built from escaped tokens
	return out
}

func plainLines(text string) []template.HTML {
	lines := strings.Split(text, "\n")
	out := make([]template.HTML, len(lines))
	for i, l := range lines {
		out[i] = template.HTML(html.EscapeString(l)) //nolint:gosec // escaped
	}
	return out
}

// class is chroma's CSS class for a token type (its parent's when it has
// none of its own), as chroma's HTML formatter names them.
func class(t chroma.TokenType) string {
	for ; t != 0; t = t.Parent() {
		if cls, ok := chroma.StandardTypes[t]; ok {
			return cls
		}
	}
	return ""
}
