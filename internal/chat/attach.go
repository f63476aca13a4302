package chat

import (
	"regexp"
	"strings"
	"sync"
)

// The regexps compile on first use: the hooks import this package and
// start on every tool call.
var (
	attachMarker  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[DISCORD_ATTACH:\s*([^\]\n]+?)\s*\]`) })
	trailingBlank = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[ \t]+\n`) })
)

// AttachMarkers removes every [DISCORD_ATTACH: name] marker from text and
// returns the cleaned text and the names, in order, without duplicates.
func AttachMarkers(text string) (clean string, names []string) {
	seen := map[string]bool{}
	for _, m := range attachMarker().FindAllStringSubmatch(text, -1) {
		if n := m[1]; !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	clean = attachMarker().ReplaceAllString(text, "")
	clean = trailingBlank().ReplaceAllString(clean, "\n")
	return strings.TrimSpace(clean), names
}
