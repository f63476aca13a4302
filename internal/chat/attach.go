package chat

import (
	"regexp"
	"strings"
)

var attachMarker = regexp.MustCompile(`\[DISCORD_ATTACH:\s*([^\]\n]+?)\s*\]`)

// AttachMarkers removes every [DISCORD_ATTACH: name] marker from text and
// returns the cleaned text and the names, in order, without duplicates.
func AttachMarkers(text string) (clean string, names []string) {
	seen := map[string]bool{}
	for _, m := range attachMarker.FindAllStringSubmatch(text, -1) {
		if n := m[1]; !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	clean = attachMarker.ReplaceAllString(text, "")
	clean = regexp.MustCompile(`[ \t]+\n`).ReplaceAllString(clean, "\n")
	return strings.TrimSpace(clean), names
}
