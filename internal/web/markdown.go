package web

import (
	"bytes"
	"html"
	"html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// md renders replies: GitHub-flavoured Markdown, where raw HTML shows as
// the text it is. goldmark's default drops it for a comment; a reply that
// talks about <script> should still say so, and nothing Claude writes
// (or quotes from a file or a web page) ever reaches the page as markup.
// Links with a dangerous scheme (javascript:) are dropped by goldmark.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawAsText{}, 100))),
)

// markdown renders s; on an error the text is shown escaped.
func markdown(s string) template.HTML {
	var b bytes.Buffer
	if err := md.Convert([]byte(s), &b); err != nil {
		return template.HTML("<pre>" + html.EscapeString(s) + "</pre>")
	}
	return template.HTML(b.String()) //nolint:gosec // goldmark output with raw HTML escaped (rawAsText)
}

// rawAsText renders raw HTML nodes as escaped text, and fenced code
// highlighted with chroma's classes. Registered with a lower priority
// number than goldmark's HTML renderer, it wins.
type rawAsText struct{}

func (rawAsText) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		b := n.(*ast.FencedCodeBlock)
		var text strings.Builder
		lines := b.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			text.Write(seg.Value(src))
		}
		_, _ = w.WriteString(`<pre class="chroma"><code>`)
		for i, l := range highlightCode(string(b.Language(src)), text.String()) {
			if i > 0 {
				_ = w.WriteByte('\n')
			}
			_, _ = w.WriteString(string(l))
		}
		_, _ = w.WriteString("</code></pre>\n")
		return ast.WalkSkipChildren, nil
	})
	r.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				_, _ = w.WriteString(html.EscapeString(string(seg.Value(src))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	r.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		b := n.(*ast.HTMLBlock)
		if entering {
			_, _ = w.WriteString(`<pre class="raw">`)
			lines := b.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				_, _ = w.WriteString(html.EscapeString(string(seg.Value(src))))
			}
			if b.HasClosure() {
				_, _ = w.WriteString(html.EscapeString(string(b.ClosureLine.Value(src))))
			}
			_, _ = w.WriteString("</pre>\n")
		}
		return ast.WalkSkipChildren, nil
	})
}
