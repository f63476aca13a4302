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
// input but its prose, whatever the tool (a shell command, a patch, a
// file argument), and matches conservatively, since a false refusal beats a leak:
//   - each path as written, with its symlinks resolved, and ~-, $HOME- or
//     ${HOME}-relative, anywhere in the text;
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
	texts := inputStrings(c.fields, nil)
	for _, p := range paths {
		for _, form := range c.forms(p) {
			for _, t := range texts {
				if strings.Contains(t, form) {
					return p
				}
			}
		}
	}
	for _, v := range vars {
		for _, t := range texts {
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

// prose are the input fields a tool shows or writes as text but never
// opens as a path or runs: a Bash call's description, a file's new
// content, an edit's strings, a subagent's prompt. A path named there
// reads nothing ("rm -rf /" in a description), and the shell that may
// later run written text is another call, checked then.
var prose = []string{"description", "prompt", "content", "old_string", "new_string", "new_source", "plan"}

// inputStrings collects every string value of a decoded JSON input but
// its prose.
func inputStrings(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case []any:
		for _, e := range v {
			out = inputStrings(e, out)
		}
	case map[string]any:
		for k, e := range v {
			if !slices.Contains(prose, k) {
				out = inputStrings(e, out)
			}
		}
	}
	return out
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
