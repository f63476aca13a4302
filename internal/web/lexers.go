package web

import (
	"embed"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alecthomas/chroma/v2"
)

// lexerDefs are chroma's own XML lexer definitions, copied verbatim from
// the chroma module this build pins (TestLexersAreChromas checks them;
// -update copies them again after a bump). They and the lexer rules below
// are chroma's, under its licence (lexers/COPYING).
//
// The highlighter does not import chroma/v2/lexers: that package reads and
// parses all of these, and compiles their analyser regexes, at package
// init, ~5.5 MiB of resident memory in every daemon, with the web view on
// or off, whether or not a page is ever highlighted. Here they stay unread
// in the binary until the first highlighted page builds the registry.
//
//go:embed lexers/*.xml
var lexerDefs embed.FS

// registryBuilt says whether the registry exists yet (for the test that
// keeps it out of start-up).
var registryBuilt atomic.Bool

// registry is the highlighter's lexer registry, built on first use: every
// XML lexer, then the few chroma writes in Go that a page of a coding
// session shows most (Go, Markdown, Go templates), registered after them
// as chroma's own registry does.
var registry = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(lexerDefs, "lexers/*.xml")
	if err != nil {
		panic(err) // a constant pattern over an embedded directory
	}
	for _, p := range paths {
		reg.Register(chroma.MustNewXMLLexer(lexerDefs, p))
	}
	registerGoWritten(reg)
	registryBuilt.Store(true)
	return reg
})

// fallbackLexer is chroma's fallback: the text as one plain token a line.
var fallbackLexer = sync.OnceValue(func() chroma.Lexer {
	return chroma.MustNewLexer(&chroma.Config{Name: "fallback", Filenames: []string{"*"}, Priority: -1},
		func() chroma.Rules {
			return chroma.Rules{"root": {rule(`.+`, chroma.Text, nil), rule(`\n`, chroma.Text, nil)}}
		})
})

func rule(pattern string, typ chroma.Emitter, m chroma.Mutator) chroma.Rule {
	return chroma.Rule{Pattern: pattern, Type: typ, Mutator: m}
}

// registerGoWritten registers chroma's Go, Go template and Markdown
// lexers, which chroma defines in Go rather than XML (chroma v2
// lexers/go.go and lexers/markdown.go, the same rules and configs; MIT).
// chroma's other Go-written lexers are not carried: reStructuredText,
// HTTP, Raku, Haxe, Svelte, Caddyfile, Gemtext, Genshi, Markless, PHTML and
// YAML+Jinja files show plain; Common Lisp, Emacs Lisp, ERB, MySQL, dns,
// TypoScript and Zed by chroma's XML definition alone (without the Go
// side's name remapping, HTML around ERB, or content analyser).
func registerGoWritten(reg *chroma.LexerRegistry) {
	html := reg.Get("HTML")
	goText := reg.Register(chroma.MustNewXMLLexer(lexerDefs, "lexers/go_template.xml").SetConfig(
		&chroma.Config{Name: "Go Text Template", Aliases: []string{"go-text-template"}}))
	reg.Register(chroma.DelegatingLexer(html, chroma.MustNewXMLLexer(lexerDefs, "lexers/go_template.xml").SetConfig(
		&chroma.Config{Name: "Go HTML Template", Aliases: []string{"go-html-template"}})))
	reg.Register(chroma.MustNewLexer(&chroma.Config{
		Name:      "Go",
		Aliases:   []string{"go", "golang"},
		Filenames: []string{"*.go"},
		MimeTypes: []string{"text/x-gosrc"},
	}, func() chroma.Rules { return goRules(goText) }).SetAnalyser(func(text string) float32 {
		if strings.Contains(text, "fmt.") && strings.Contains(text, "package ") {
			return 0.5
		}
		if strings.Contains(text, "package ") {
			return 0.1
		}
		return 0.0
	}))
	reg.Register(&markdownLexer{Lexer: chroma.MustNewLexer(&chroma.Config{
		Name:      "markdown",
		Aliases:   []string{"md", "mkd"},
		Filenames: []string{"*.md", "*.mkd", "*.markdown"},
		MimeTypes: []string{"text/x-markdown"},
	}, markdownRules), reg: reg})
}

// markdownLexer highlights a leading YAML front matter block as YAML, the
// rest as Markdown.
type markdownLexer struct {
	chroma.Lexer
	reg *chroma.LexerRegistry
}

func (m *markdownLexer) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	front, rest, ok := splitFrontmatter(text)
	yaml := m.reg.Get("YAML")
	if !ok || yaml == nil {
		return m.Lexer.Tokenise(options, text)
	}
	yamlTokens, err := yaml.Tokenise(options, front)
	if err != nil {
		return nil, err
	}
	mdTokens, err := m.Lexer.Tokenise(options, rest)
	if err != nil {
		return nil, err
	}
	return chroma.Concaterator(yamlTokens, mdTokens), nil
}

// splitFrontmatter cuts a leading "---" … "---" block off text.
func splitFrontmatter(text string) (front, rest string, ok bool) {
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return "", text, false
	}
	pos := strings.IndexByte(text, '\n') + 1
	for pos < len(text) {
		next := strings.IndexByte(text[pos:], '\n')
		if next < 0 {
			break
		}
		end := pos + next
		if strings.TrimSuffix(text[pos:end], "\r") == "---" {
			return text[:end+1], text[end+1:], true
		}
		pos = end + 1
	}
	return "", text, false
}

func goRules(goText chroma.Lexer) chroma.Rules {
	return chroma.Rules{
		"root": {
			rule(`\n`, chroma.TextWhitespace, nil),
			rule(`\s+`, chroma.TextWhitespace, nil),
			rule(`//[^\s\n\r][^\n\r]*`, chroma.CommentPreproc, nil),
			rule(`//[^\n\r]*`, chroma.CommentSingle, nil),
			rule(`/(\\\n)?[*](.|\n)*?[*](\\\n)?/`, chroma.CommentMultiline, nil),
			rule(`(import|package)\b`, chroma.KeywordNamespace, nil),
			rule(`(var|func|struct|map|chan|type|interface|const)\b`, chroma.KeywordDeclaration, nil),
			rule(chroma.Words(``, `\b`, `break`, `default`, `select`, `case`, `defer`, `go`, `else`, `goto`, `switch`, `fallthrough`, `if`, `range`, `continue`, `for`, `return`), chroma.Keyword, nil),
			rule(`(true|false|iota|nil)\b`, chroma.KeywordConstant, nil),
			rule(chroma.Words(``, `\b(\()`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `print`, `println`, `panic`, `recover`, `close`, `complex`, `real`, `imag`, `len`, `cap`, `append`, `copy`, `delete`, `new`, `make`, `clear`, `min`, `max`), chroma.ByGroups(chroma.NameBuiltin, chroma.Punctuation), nil),
			rule(chroma.Words(``, `\b`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `any`), chroma.KeywordType, nil),
			rule(`\d+i`, chroma.LiteralNumber, nil),
			rule(`\d+\.\d*([Ee][-+]\d+)?i`, chroma.LiteralNumber, nil),
			rule(`\.\d+([Ee][-+]\d+)?i`, chroma.LiteralNumber, nil),
			rule(`\d+[Ee][-+]\d+i`, chroma.LiteralNumber, nil),
			rule(`\d+(\.\d+[eE][+\-]?\d+|\.\d*|[eE][+\-]?\d+)`, chroma.LiteralNumberFloat, nil),
			rule(`\.\d+([eE][+\-]?\d+)?`, chroma.LiteralNumberFloat, nil),
			rule(`0[0-7]+`, chroma.LiteralNumberOct, nil),
			rule(`0[xX][0-9a-fA-F_]+`, chroma.LiteralNumberHex, nil),
			rule(`0b[01_]+`, chroma.LiteralNumberBin, nil),
			rule(`(0|[1-9][0-9_]*)`, chroma.LiteralNumberInteger, nil),
			rule(`'(\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\\])'`, chroma.LiteralStringChar, nil),
			rule("(`)([^`]*)(`)", chroma.ByGroups(chroma.LiteralString, chroma.UsingLexer(chroma.TypeRemappingLexer(goText, chroma.TypeMapping{{From: chroma.Other, To: chroma.LiteralString}})), chroma.LiteralString), nil),
			rule(`"(\\\\|\\"|[^"])*"`, chroma.LiteralString, nil),
			rule(`(<<=|>>=|<<|>>|<=|>=|&\^=|&\^|\+=|-=|\*=|/=|%=|&=|\|=|&&|\|\||<-|\+\+|--|==|!=|:=|\.\.\.|[+\-*/%&])`, chroma.Operator, nil),
			rule(`([a-zA-Z_]\w*)(\s*)(\()`, chroma.ByGroups(chroma.NameFunction, chroma.UsingSelf("root"), chroma.Punctuation), nil),
			rule(`[|^<>=!()\[\]{}.,;:~]`, chroma.Punctuation, nil),
			rule(`[^\W\d]\w*`, chroma.NameOther, nil),
		},
	}
}

func markdownRules() chroma.Rules {
	return chroma.Rules{
		"root": {
			rule(`<!--[\w\W]*?-->`, chroma.CommentMultiline, nil),
			rule(`^(#[^#].+\n)`, chroma.ByGroups(chroma.GenericHeading), nil),
			rule(`^(#{2,6}.+\n)`, chroma.ByGroups(chroma.GenericSubheading), nil),
			rule(`^(\s*)([*-] )(\[[ xX]\])( .+\n)`, chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.Keyword, chroma.UsingSelf("inline")), nil),
			rule(`^(\s*)([*-])(\s)(.+\n)`, chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.Text, chroma.UsingSelf("inline")), nil),
			rule(`^(\s*)([0-9]+\.)( .+\n)`, chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.UsingSelf("inline")), nil),
			rule(`^(\s*>\s)(.+\n)`, chroma.ByGroups(chroma.Keyword, chroma.GenericEmph), nil),
			rule("^(```\\n)([\\w\\W]*?)(^```$)", chroma.ByGroups(chroma.String, chroma.Text, chroma.String), nil),
			rule("^(```)(\\w+)(\\n)([\\w\\W]*?)(^```$)", chroma.UsingByGroup(2, 4, chroma.String, chroma.String, chroma.String, chroma.Text, chroma.String), nil),
			chroma.Include("inline"),
		},
		"inline": {
			rule(`<!--[\w\W]*?-->`, chroma.CommentMultiline, nil),
			rule(`\\.`, chroma.Text, nil),
			rule(`(\s)(\*|_)((?:(?!\2).)*)(\2)((?=\W|\n))`, chroma.ByGroups(chroma.Text, chroma.GenericEmph, chroma.GenericEmph, chroma.GenericEmph, chroma.Text), nil),
			rule(`(\s)((\*\*|__).*?)\3((?=\W|\n))`, chroma.ByGroups(chroma.Text, chroma.GenericStrong, chroma.GenericStrong, chroma.Text), nil),
			rule(`(\s)(~~[^~]+~~)((?=\W|\n))`, chroma.ByGroups(chroma.Text, chroma.GenericDeleted, chroma.Text), nil),
			rule("`[^`]+`", chroma.LiteralStringBacktick, nil),
			rule(`[@#][\w/:]+`, chroma.NameEntity, nil),
			rule(`(!?\[)([^]]+)(\])(\()([^)]+)(\))`, chroma.ByGroups(chroma.Text, chroma.NameTag, chroma.Text, chroma.Text, chroma.NameAttribute, chroma.Text), nil),
			rule(`.|\n`, chroma.Text, nil),
		},
	}
}
