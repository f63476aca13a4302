package policy

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Guarded reports the first of paths (absolute; a directory ends in "/")
// that the call names anywhere in its input, or vars (names of variables
// that hold one) it uses; "" when none. It looks at every string of the
// input but its labels, whatever the tool (a shell command, a patch, a
// file argument, a file's new content), and matches conservatively, since
// a false refusal beats a leak:
//   - each path as written, with its symlinks resolved, and ~-, $HOME- or
//     ${HOME}-relative, anywhere in the text (a file's new content too);
//   - each word that reads as a path (split at shell punctuation),
//     relative to the cwd, resolved through symlinks, its glob expanded
//     (outside the body of a patch, which is taken literally);
//   - a word naming a directory that holds a guarded path, in a call that
//     reads a tree (grep -r, rg, find, tar, …).
//
// What a shell builds at run time (a variable set in the same command, a
// decoded string) no hook can see.
func Guarded(c Call, paths, vars []string) string {
	c.fields = c.decoded()
	c.memo = &memo{real: map[string]string{}}
	var texts, written []string
	inputStrings(c.fields, &texts, &written)
	named := append(slices.Clone(texts), written...)
	for _, p := range paths {
		for _, form := range c.forms(p) {
			for _, t := range named {
				if strings.Contains(t, form) {
					return p
				}
			}
		}
	}
	for _, v := range vars {
		for _, t := range named {
			if strings.Contains(t, v) {
				return "$" + v
			}
		}
	}
	for _, t := range texts {
		if home := c.Home; home != "" {
			t = strings.NewReplacer("${HOME}", home, "$HOME", home).Replace(t)
		}
		// A patch's body is taken literally; the shell around it expands
		// globs and may read whole trees.
		shell := withoutPatches(t)
		recursive := slices.ContainsFunc(wordSep.Split(shell, -1), readsTrees)
		for _, w := range c.pathWords(t) {
			for _, p := range paths {
				if c.matchPath(pattern(p), w) {
					return p
				}
			}
		}
		for _, w := range c.pathWords(shell) {
			files := []string{w}
			if strings.ContainsAny(w, "*?[") {
				files, _ = filepath.Glob(w)
			}
			for _, f := range files {
				for _, p := range paths {
					if c.matchPath(pattern(p), f) || (recursive && c.holds(f, p)) {
						return p
					}
				}
			}
		}
	}
	return ""
}

// pattern is a guarded path as a rule's absolute pattern.
func pattern(p string) string {
	if strings.HasSuffix(p, "/") {
		return "/" + filepath.Clean(p) + "/**"
	}
	return "/" + filepath.Clean(p)
}

// forms are the ways a call may write p: as is and with its symlinks
// resolved, each also relative to the home directory.
func (c Call) forms(p string) []string {
	var out []string
	for _, v := range c.variants(filepath.Clean(p)) {
		out = append(out, v)
		for _, h := range c.variants(c.Home) {
			if h == "" || h == "/" || !within(v, h) || v == h {
				continue
			}
			rel := strings.TrimPrefix(v, h+"/")
			out = append(out, "~/"+rel, "$HOME/"+rel, "${HOME}/"+rel)
		}
	}
	return out
}

// holds reports whether dir (a word of the call) is a directory above the
// guarded path p.
func (c Call) holds(dir, p string) bool {
	for _, d := range c.variants(filepath.Clean(dir)) {
		for _, v := range c.variants(filepath.Clean(p)) {
			if d != v && within(v, d) {
				return true
			}
		}
	}
	return false
}

// labels are the input fields a tool only shows: a Bash call's
// description, a subagent's prompt (its own calls pass this hook), a
// plan. What they say opens nothing ("rm -rf /" in a description).
var labels = []string{"description", "prompt", "plan"}

// writes are the input fields a tool writes as they are: a file's new
// content, an edit's new text, a notebook cell's source. A guarded path
// or variable named there is refused (the text may be run later, by a
// call that names nothing: `sh x.sh`, `npm test`); their words are not
// read as paths or commands of this call.
var writes = []string{"content", "new_string", "new_source"}

// inputStrings collects the string values of a decoded JSON input: those
// written as they are into written, the rest but labels into texts.
func inputStrings(v any, texts, written *[]string) {
	switch v := v.(type) {
	case string:
		*texts = append(*texts, v)
	case []any:
		for _, e := range v {
			inputStrings(e, texts, written)
		}
	case map[string]any:
		for k, e := range v {
			switch {
			case slices.Contains(labels, k):
			case slices.Contains(writes, k):
				inputStrings(e, written, written)
			default:
				inputStrings(e, texts, written)
			}
		}
	}
}

// wordSep splits a text into the words that may be paths: at white space
// and at the shell's (and a patch header's) punctuation.
var wordSep = regexp.MustCompile("[\\s;|&<>()`'\"=,:{}]+")

// pathWords are the words of t that may name a file, absolute.
func (c Call) pathWords(t string) []string {
	var out []string
	for _, w := range wordSep.Split(t, -1) {
		switch {
		case w == "" || strings.HasPrefix(w, "-") || strings.Contains(w, "$"):
			continue
		case w == "~" && c.Home != "":
			w = c.Home
		case strings.HasPrefix(w, "~/") && c.Home != "":
			w = filepath.Join(c.Home, w[2:])
		case !filepath.IsAbs(w):
			w = filepath.Join(c.Cwd, w)
		}
		out = append(out, w)
	}
	return out
}

// withoutPatches is t without the bodies of the patches it holds: code
// and prose there ("find", "-r", a lone "/") run nothing.
func withoutPatches(t string) string {
	for {
		i := strings.Index(t, "*** Begin Patch")
		j := strings.Index(t, "*** End Patch")
		if i < 0 || j < i {
			return t
		}
		t = t[:i] + t[j+len("*** End Patch"):]
	}
}

// treeReaders are programs that read every file under a directory named.
var treeReaders = []string{"rg", "ag", "ack", "find", "fd", "tar", "zip", "rsync", "cpio", "du", "tree"}

// recursiveFlag is an option cluster with -r or -R (grep, cp, chmod, ls).
var recursiveFlag = regexp.MustCompile(`^-[a-zA-Z]*[rR][a-zA-Z]*$`)

// readsTrees reports whether a word of a command makes it read whole
// trees.
func readsTrees(w string) bool {
	return w == "--recursive" || recursiveFlag.MatchString(w) || slices.Contains(treeReaders, filepath.Base(w))
}
