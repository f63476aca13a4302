// Package opened is what /open and /close do with folders no project
// maps: which folders may be opened (under a server's open_roots, never
// out of them through ".." or a symlink), the folders suggested as a name
// is typed, the project an opened folder runs as, and the opened folders
// a server has. It knows no chat platform; the front end starts the
// folder's thread and its session.
package opened

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
)

// openRoot is one of a server's open_roots: as written (how suggestions
// show it), expanded, and with its symlinks resolved ("" when it does not
// exist).
type openRoot struct {
	shown, abs, real string
}

func openRoots(roots []string) []openRoot {
	var out []openRoot
	for _, r := range roots {
		abs, err := config.ExpandHome(r)
		if err != nil || !filepath.IsAbs(abs) {
			continue
		}
		abs = filepath.Clean(abs)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = ""
		}
		out = append(out, openRoot{shown: filepath.Clean(r), abs: abs, real: real})
	}
	return out
}

// within reports whether p is dir or under it (both clean and absolute).
func within(dir, p string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Resolve finds the folder /open was given: an absolute path (or
// one under ~/), or one relative to a root. It must be a folder under a
// root once its symlinks are resolved. Whether something exists outside
// the roots is never told: a path outside them is refused as such first.
func Resolve(roots []string, input string) (string, error) {
	in := strings.TrimSpace(input)
	rs := openRoots(roots)
	var shown []string
	for _, r := range rs {
		shown = append(shown, r.shown)
	}
	under := strings.Join(shown, ", ")
	if in == "" {
		return "", fmt.Errorf("give a folder under %s", under)
	}
	if slices.Contains(strings.Split(filepath.ToSlash(in), "/"), "..") {
		return "", fmt.Errorf("%q goes up a folder with \"..\", which /open refuses: give the folder's path under %s", in, under)
	}
	exp, err := config.ExpandHome(in)
	if err != nil {
		return "", err
	}
	var candidates []string
	if filepath.IsAbs(exp) {
		candidates = []string{filepath.Clean(exp)}
	} else {
		for _, r := range rs {
			candidates = append(candidates, filepath.Join(r.abs, exp))
		}
	}
	var p string
	for _, c := range candidates {
		if !slices.ContainsFunc(rs, func(r openRoot) bool { return within(r.abs, c) || within(r.real, c) }) {
			continue
		}
		if p == "" {
			p = c
		}
		if _, err := os.Lstat(c); err == nil {
			p = c
			break
		}
	}
	if p == "" {
		return "", fmt.Errorf("%s is not under the folders /open may open (open_roots: %s)", in, under)
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, os.ErrNotExist) {
		if _, lerr := os.Lstat(p); lerr == nil {
			return "", fmt.Errorf("%s is a symlink to something that does not exist", p)
		}
		return "", fmt.Errorf("%s does not exist", p)
	}
	if err != nil {
		return "", fmt.Errorf("%s cannot be read: %w", p, err)
	}
	if !slices.ContainsFunc(rs, func(r openRoot) bool { return within(r.real, real) }) {
		return "", fmt.Errorf("%s leads (through a symlink) to %s, outside the folders /open may open (open_roots: %s)", p, real, under)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%s cannot be read: %w", p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is a file, not a folder", p)
	}
	return real, nil
}

// Suggestion limits: the walk of the roots stops at maxSuggestDepth
// folders down, after maxSuggestVisits folders or after SuggestBudget, so
// that a huge tree still gets an answer within Discord's three seconds.
const (
	maxSuggestDepth  = 4
	maxSuggestVisits = 50000
	SuggestBudget    = 1500 * time.Millisecond
)

type folderMatch struct {
	shown string
	rank  int // 0: the name starts with what was typed; 1: the name holds it; 2: the path does
	depth int
}

// Suggest suggests the folders under roots whose path holds what was
// typed: those whose name starts with it first, then the shallower, then
// by path, walking until deadline. Hidden folders and node_modules are not
// walked; nor are symlinks (they may lead out of the roots, or in a loop).
func Suggest(roots []string, typed string, deadline time.Time) []chat.Choice {
	typed = strings.ToLower(strings.TrimSpace(typed))
	// A path typed from a root ("~/src/ap") matches paths; a bare word
	// matches names first.
	typedBase := typed
	if i := strings.LastIndex(typed, "/"); i >= 0 {
		typedBase = typed[i+1:]
	}
	var found []folderMatch
	visits := 0
	type dir struct {
		abs, shown string
		depth      int
	}
	for _, root := range openRoots(roots) {
		queue := []dir{{root.abs, root.shown, 0}}
		for len(queue) > 0 && visits < maxSuggestVisits {
			d := queue[0]
			queue = queue[1:]
			visits++
			if visits%64 == 0 && time.Now().After(deadline) {
				break
			}
			entries, err := os.ReadDir(d.abs)
			if err != nil {
				continue
			}
			for _, e := range entries {
				name := e.Name()
				if !e.IsDir() || strings.HasPrefix(name, ".") || name == "node_modules" {
					continue
				}
				shown := d.shown + "/" + name
				if d.depth+1 < maxSuggestDepth {
					queue = append(queue, dir{filepath.Join(d.abs, name), shown, d.depth + 1})
				}
				if len(shown) > 100 {
					continue // longer than a choice's value may be
				}
				lower, lname := strings.ToLower(shown), strings.ToLower(name)
				m := folderMatch{shown: shown, depth: d.depth + 1, rank: -1}
				switch {
				case typed == "":
					m.rank = 0
				case strings.HasPrefix(lname, typedBase) && (typedBase == typed || strings.Contains(lower, typed)):
					m.rank = 0
				case strings.Contains(lname, typedBase) && (typedBase == typed || strings.Contains(lower, typed)):
					m.rank = 1
				case strings.Contains(lower, typed):
					m.rank = 2
				}
				if m.rank >= 0 {
					found = append(found, m)
				}
			}
		}
	}
	slices.SortFunc(found, func(a, b folderMatch) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return strings.Compare(a.shown, b.shown)
	})
	out := make([]chat.Choice, 0, min(len(found), chat.MaxChoices))
	for _, m := range found[:min(len(found), chat.MaxChoices)] {
		out = append(out, chat.Choice{Name: m.shown, Value: m.shown})
	}
	return out
}
