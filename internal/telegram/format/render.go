package format

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"net/url"
	"strings"
	"sync"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/ccbridge/ccbridge/internal/chat"
)

type kind uint8

const (
	kBold kind = iota
	kItalic
	kStrike
	kCode
	kPre
	kLink
	kQuote
)

// tag is one element of the output. Runs share a *tag for as long as the
// element lasts, so two code blocks in a row stay two entities, and an
// element cut by a chunk boundary is reopened, as itself, in the next.
type tag struct {
	kind kind
	attr string // a link's href, a code block's language
}

func (t *tag) open() string {
	switch t.kind {
	case kBold:
		return "<b>"
	case kItalic:
		return "<i>"
	case kStrike:
		return "<s>"
	case kCode:
		return "<code>"
	case kPre:
		if t.attr == "" {
			return "<pre>"
		}
		// Telegram takes a block's language from a code element spanning it.
		return `<pre><code class="language-` + Escape(t.attr) + `">`
	case kLink:
		return `<a href="` + Escape(t.attr) + `">`
	}
	return "<blockquote>"
}

func (t *tag) close() string {
	switch t.kind {
	case kBold:
		return "</b>"
	case kItalic:
		return "</i>"
	case kStrike:
		return "</s>"
	case kCode:
		return "</code>"
	case kPre:
		if t.attr == "" {
			return "</pre>"
		}
		return "</code></pre>"
	case kLink:
		return "</a>"
	}
	return "</blockquote>"
}

// run is a stretch of the document's text, under the tags open around
// it, outermost first.
type run struct {
	start, end int
	tags       []*tag
}

// doc is a rendered reply: its runs, and their text joined.
type doc struct {
	runs []run
	text string
}

// markdownParser is built on first use: a program that links the package
// without splitting (a hook taking another path) pays nothing at start.
var markdownParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(extension.Strikethrough)).Parser()
})

// render parses markdown and lays it out as runs of text under tags.
func render(markdown string) *doc {
	markdown = strings.ToValidUTF8(markdown, "\uFFFD")
	markdown = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(markdown)
	src := []byte(chat.Markdown(markdown))
	r := &renderer{src: src}
	r.blocks(markdownParser().Parse(text.NewReader(src)), "\n\n")
	return &doc{runs: r.runs, text: r.all.String()}
}

type renderer struct {
	src    []byte
	runs   []run
	stack  []*tag
	sep    string          // the break owed before the next text ("\n", "\n\n")
	indent string          // what continues a line inside a list item
	all    strings.Builder // every text written, joined
	last   rune            // the last character written
	before rune            // the one before it
}

// blocks renders parent's block children, sep between two of them.
func (r *renderer) blocks(parent ast.Node, sep string) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		if n != parent.FirstChild() {
			r.owe(sep)
		}
		r.block(n)
	}
}

// owe records a break to write before the next text; the longer of two
// owed breaks wins, and none is written before the first text.
func (r *renderer) owe(sep string) {
	if len(sep) > len(r.sep) {
		r.sep = sep
	}
}

func (r *renderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.inlines(n)
	case *ast.Heading:
		r.with(&tag{kind: kBold}, func() { r.inlines(n) })
	case *ast.ThematicBreak:
		r.write("────────────────────")
	case *ast.CodeBlock:
		r.code(n, "")
	case *ast.FencedCodeBlock:
		r.code(n, language(n.Language(r.src)))
	case *ast.Blockquote:
		r.with(&tag{kind: kQuote}, func() { r.blocks(n, "\n\n") })
	case *ast.List:
		r.list(n)
	case *ast.LinkReferenceDefinition:
		// Shows nothing; its links carry its destination.
	case *ast.HTMLBlock:
		if n.HTMLBlockType == ast.HTMLBlockType2 {
			return // a comment
		}
		var b strings.Builder
		writeLines(&b, n.Lines(), r.src)
		if n.HasClosure() {
			b.Write(n.ClosureLine.Value(r.src))
		}
		r.write(strings.TrimRight(b.String(), "\n"))
	default:
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			var b strings.Builder
			writeLines(&b, n.Lines(), r.src)
			r.write(strings.TrimRight(b.String(), "\n"))
			return
		}
		r.blocks(n, "\n\n")
	}
}

// bullets mark list items by nesting depth.
var bullets = []string{"•", "◦", "▪"}

// list keeps a list as text: a bullet or number starts each item, and
// the item's further lines are indented under its text.
func (r *renderer) list(l *ast.List) {
	depth := 0
	for p := l.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.List); ok {
			depth++
		}
	}
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			r.owe("\n")
		}
		marker := bullets[depth%len(bullets)] + " "
		if l.IsOrdered() {
			marker = fmt.Sprintf("%d%c ", num, l.Marker)
			num++
		}
		r.write(marker)
		outer := r.indent
		r.indent = outer + strings.Repeat(" ", len([]rune(marker)))
		sep := "\n"
		if !l.IsTight {
			sep = "\n\n"
		}
		r.blocks(item, sep)
		r.indent = outer
	}
}

func (r *renderer) code(n ast.Node, lang string) {
	var b strings.Builder
	writeLines(&b, n.Lines(), r.src)
	r.with(&tag{kind: kPre, attr: lang}, func() { r.write(strings.TrimRight(b.String(), "\n")) })
}

func writeLines(b *strings.Builder, lines *text.Segments, src []byte) {
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
}

// language keeps a fence's language tag when it is a plain word.
func language(info []byte) string {
	lang := string(info)
	if len(lang) > 32 {
		return ""
	}
	for _, c := range lang {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("+#-_.", c)) {
			return ""
		}
	}
	return lang
}

func (r *renderer) inlines(parent ast.Node) {
	for n := parent.FirstChild(); n != nil; {
		if t, ok := n.(*ast.Text); ok && r.subtext(t) {
			n = r.subtextLine(t)
			continue
		}
		r.inline(n)
		n = n.NextSibling()
	}
}

// subtextMark starts a line of Discord's subtext ("-# "), which the core
// writes (the reply's footer) and Telegram has no Markdown for.
var subtextMark = []byte("-# ")

// subtext reports whether t starts a line with the subtext mark.
func (r *renderer) subtext(t *ast.Text) bool {
	start := t.Segment.Start
	if r.inside(kCode) || !bytes.HasPrefix(t.Segment.Value(r.src), subtextMark) {
		return false
	}
	line := bytes.LastIndexByte(r.src[:start], '\n') + 1
	return len(bytes.TrimSpace(r.src[line:start])) == 0
}

// subtextLine renders the line first starts, without its mark, in italic
// (the closest Telegram has to Discord's small grey text); it returns the
// node after the line.
func (r *renderer) subtextLine(first *ast.Text) ast.Node {
	var n ast.Node = first
	broken := first.SoftLineBreak() || first.HardLineBreak()
	r.with(&tag{kind: kItalic}, func() {
		v := first.Segment.Value(r.src)[len(subtextMark):]
		if first.IsRaw() {
			r.write(string(v))
		} else {
			r.write(unescape(v))
		}
		for !broken && n.NextSibling() != nil {
			n = n.NextSibling()
			t, ok := n.(*ast.Text)
			if !ok || !(t.SoftLineBreak() || t.HardLineBreak()) {
				r.inline(n)
				continue
			}
			if v := t.Segment.Value(r.src); t.IsRaw() {
				r.write(string(v))
			} else {
				r.write(unescape(v))
			}
			broken = true
		}
	})
	if broken {
		r.write("\n")
	}
	return n.NextSibling()
}

func (r *renderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(r.src)
		if n.IsRaw() {
			r.write(string(v))
		} else {
			r.write(unescape(v))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.write("\n")
		}
	case *ast.String:
		r.write(string(n.Value))
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				v := t.Segment.Value(r.src)
				if bytes.HasSuffix(v, []byte("\n")) {
					v = append(v[:len(v)-1:len(v)-1], ' ')
				}
				b.Write(v)
			} else if s, ok := c.(*ast.String); ok {
				b.Write(s.Value)
			}
		}
		// Telegram lets no entity hold code but bold, italic and the like:
		// code in a link is the link's plain text.
		if r.inside(kLink) {
			r.write(b.String())
			return
		}
		r.with(&tag{kind: kCode}, func() { r.write(b.String()) })
	case *ast.Emphasis:
		k := kItalic
		if n.Level >= 2 {
			k = kBold
		}
		r.with(&tag{kind: k}, func() { r.inlines(n) })
	case *extast.Strikethrough:
		r.with(&tag{kind: kStrike}, func() { r.inlines(n) })
	case *ast.Link:
		r.link(n, n.Destination)
	case *ast.Image:
		r.link(n, n.Destination)
	case *ast.AutoLink:
		// Telegram links a bare URL or address itself.
		r.write(string(n.Label(r.src)))
	case *ast.RawHTML:
		var b strings.Builder
		writeLines(&b, n.Segments, r.src)
		raw := strings.ToLower(strings.ReplaceAll(b.String(), " ", ""))
		switch {
		case raw == "<br>" || raw == "<br/>":
			r.write("\n")
		case strings.HasPrefix(raw, "<!--"):
			// a comment shows nothing
		default:
			r.write(b.String())
		}
	default:
		r.inlines(n)
	}
}

// link renders a link or an image (its alt text) as a link when Telegram
// may open its destination, else as its text followed by the destination.
func (r *renderer) link(n ast.Node, dest []byte) {
	href := string(util.URLEscape(dest, true))
	shown := unescape(dest)
	label := func() {
		if n.FirstChild() == nil {
			r.write(shown) // [](url)
			return
		}
		r.inlines(n)
	}
	if linkable(href) && !r.inside(kLink) && !r.inside(kCode) {
		r.with(&tag{kind: kLink, attr: href}, label)
		return
	}
	r.flush() // the break before the label is not part of it
	mark := r.all.Len()
	label()
	written := strings.ReplaceAll(r.all.String()[mark:], string(wordJoiner), "")
	if shown != "" && written != sanitize(shown) {
		r.write(" (" + shown + ")")
	}
}

// linkable reports whether Telegram may link href: http and https with a
// host, mailto, and tg links other than those naming a user, which would
// mention (and notify) that user.
func linkable(href string) bool {
	if href == "" || len(href) > maxURL {
		return false
	}
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	case "tg":
		host := strings.ToLower(u.Host)
		return host != "" && host != "user" && host != "openmessage"
	}
	return false
}

// with renders body inside t; a tag already open around it (bold in a
// bold heading, a quote in a quote) is not opened twice, as Telegram does
// not nest an entity in one of its kind.
func (r *renderer) with(t *tag, body func()) {
	if r.inside(t.kind) || (t.kind != kQuote && r.inside(kCode)) {
		body()
		return
	}
	if t.kind == kQuote || t.kind == kPre {
		r.flush() // the break owed before a block is outside it
	}
	r.stack = append(r.stack, t)
	body()
	r.stack = r.stack[:len(r.stack)-1]
}

func (r *renderer) inside(k kind) bool {
	for _, t := range r.stack {
		if t.kind == k || (k == kCode && t.kind == kPre) {
			return true
		}
	}
	return false
}

// flush writes the break owed before the next text, outside the inline
// tags open (a paragraph's break is not bold because its first word is),
// indented for the list item it is in; none before the first text.
func (r *renderer) flush() {
	if r.sep == "" {
		return
	}
	sep := r.sep
	r.sep = ""
	if r.all.Len() > 0 {
		r.emit(sep+r.indent, outside(r.stack))
	}
}

// write adds s, cleaned, under the open tags; inside a list item its line
// breaks are followed by the item's indent, outside code.
func (r *renderer) write(s string) {
	s = r.clean(s)
	if s == "" {
		return
	}
	r.flush()
	if r.indent != "" && !r.inside(kCode) {
		s = strings.ReplaceAll(s, "\n", "\n"+r.indent)
	}
	r.emit(s, r.stack)
}

// clean sanitizes s and, outside code, puts a word joiner after an @ that
// starts a username, so the reply mentions (and notifies) no one: Telegram
// has no allowed_mentions.
func (r *renderer) clean(s string) string {
	s = sanitize(s)
	if r.inside(kCode) {
		for _, c := range s {
			r.before, r.last = r.last, c
		}
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range s {
		if r.last == '@' && !isWord(r.before) && isASCIIWord(c) {
			b.WriteRune(wordJoiner)
		}
		b.WriteRune(c)
		r.before, r.last = r.last, c
	}
	return b.String()
}

// sanitize drops what Telegram refuses or silently removes (control
// characters, bidirectional overrides and three combining marks, as
// tdlib's clean_input_string does, and bidirectional isolates: text
// cannot be made to read other than it is) and makes Unicode line
// separators line breaks. A chunk of what Telegram would remove would be
// an empty message, which it refuses.
func sanitize(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c == '\n' || c == '\t':
		case c == '\u2028' || c == '\u2029':
			return '\n'
		case c < 0x20 || c >= 0x7f && c <= 0x9f, c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069,
			c == '\u030a' || c == '\u0333' || c == '\u033f':
			return -1
		}
		return c
	}, s)
}

const wordJoiner = '\u2060'

func isASCIIWord(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isWord(c rune) bool { return c == '_' || unicode.IsLetter(c) || unicode.IsNumber(c) }

// outside is the stack without the inline tags opened since the last
// block began: a paragraph's break is not bold because its first word is.
func outside(stack []*tag) []*tag {
	n := 0
	for n < len(stack) && stack[n].kind == kQuote {
		n++
	}
	return stack[:n]
}

func (r *renderer) emit(s string, tags []*tag) {
	tags = nested(tags)
	start := r.all.Len()
	r.all.WriteString(s)
	if n := len(r.runs); n > 0 && sameTags(r.runs[n-1].tags, tags) {
		r.runs[n-1].end = r.all.Len()
		return
	}
	r.runs = append(r.runs, run{start: start, end: r.all.Len(), tags: tags})
}

// nested orders a run's tags as Telegram nests entities as sent (tdlib's
// fix_entities would otherwise re-cut or drop them): a quote outermost,
// then a link or code, then bold, italic and strikethrough, which Telegram
// keeps only outside code. Bold around a link's words becomes bold inside
// the link; bold around code stops before it and starts again after.
func nested(tags []*tag) []*tag {
	out := make([]*tag, 0, len(tags))
	code := false
	for _, t := range tags {
		if t.kind == kQuote {
			out = append(out, t)
		}
	}
	for _, t := range tags {
		switch t.kind {
		case kCode, kPre:
			code = true
			out = append(out, t)
		case kLink:
			out = append(out, t)
		}
	}
	for _, t := range tags {
		if !code && (t.kind == kBold || t.kind == kItalic || t.kind == kStrike) {
			out = append(out, t)
		}
	}
	return out
}

func sameTags(a, b []*tag) bool {
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

// unescape is the text a span of Markdown source shows: backslash escapes
// and entity references resolved, as goldmark's HTML writer resolves them.
func unescape(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, 0) < 0 {
		return string(v)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	ghtml.DefaultWriter.Write(w, v)
	_ = w.Flush()
	return html.UnescapeString(buf.String())
}
