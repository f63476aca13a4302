package web

import (
	"bytes"
	"testing"
)

// pagesParsedBeforeTests is whether the templates were parsed when the test
// binary finished its package init.
var pagesParsedBeforeTests = pagesParsed.Load()

// The templates are parsed by the first page, not at start: parsing them at
// init ran html/template's parser and escaper in every daemon, with the view
// on or off, for pages an idle daemon never serves (BenchmarkDaemonIdleRSS,
// BenchmarkDaemonIdleRSSWebView).
func TestPagesAreParsedOnFirstUse(t *testing.T) {
	if pagesParsedBeforeTests {
		t.Error("the templates were parsed at init")
	}
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, "item", item{}); err != nil {
		t.Fatal(err)
	}
	if !pagesParsed.Load() {
		t.Error("rendering a page did not parse the templates")
	}
}
