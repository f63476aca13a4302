package policy

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// matchPath matches a gitignore-style file pattern: `//abs/path`, `~/p`,
// `/p` (from the project root), `./p` or `dir/p` (from the session's
// directory), or a pattern without a slash, which matches the file's name
// in any directory. `**` matches any number of directories.
//
// Claude Code hands tools physical paths while the project may be reached
// through a symlink (macOS /tmp, ~/work → /mnt/…), and a file may be a
// symlink into a denied place: the file, the project root and the home
// are each tried as written and with their symlinks resolved.
func (c Call) matchPath(pattern, file string) bool {
	if !filepath.IsAbs(file) {
		file = filepath.Join(c.Cwd, file)
	}
	for _, f := range c.variants(filepath.Clean(file)) {
		for _, d := range c.variants(c.Cwd) {
			for _, h := range c.variants(c.Home) {
				if matchPathLexical(pattern, f, d, h) {
					return true
				}
			}
		}
	}
	return false
}

// variants returns p, and p with its symlinks resolved when that differs.
// A path that does not exist yet (a file about to be written) resolves
// through its nearest existing parent.
func (c Call) variants(p string) []string {
	if p == "" {
		return []string{p}
	}
	if r := c.real(p); r != p {
		return []string{p, r}
	}
	return []string{p}
}

// real resolves the symlinks of an absolute, clean path one component at
// a time, its parents from the Check's memo: every rule looks at the same
// few paths and directories, so most cost one lstat.
func (c Call) real(p string) string {
	if p == "/" || !filepath.IsAbs(p) {
		return p
	}
	if c.memo != nil {
		if r, ok := c.memo.real[p]; ok {
			return r
		}
	}
	r := filepath.Join(c.real(filepath.Dir(p)), filepath.Base(p))
	if fi, err := os.Lstat(r); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if e, err := filepath.EvalSymlinks(r); err == nil {
			r = e
		}
	}
	if c.memo != nil {
		c.memo.real[p] = r
	}
	return r
}

// fullPattern makes a pattern absolute; anywhere reports a pattern without
// a slash, which matches a name (or a directory name, with /**) in any
// directory.
func fullPattern(pattern, cwd, home string) (full string, anywhere bool) {
	switch {
	case strings.HasPrefix(pattern, "//"):
		full = pattern[1:]
	case strings.HasPrefix(pattern, "~/") && home != "":
		full = filepath.Join(home, pattern[2:])
	case strings.HasPrefix(pattern, "/"):
		full = filepath.Join(cwd, pattern)
	case strings.HasPrefix(pattern, "./"):
		full = filepath.Join(cwd, pattern[2:])
	case !strings.Contains(strings.TrimSuffix(pattern, "/**"), "/"):
		return "", true
	default:
		full = filepath.Join(cwd, pattern)
	}
	if strings.HasSuffix(pattern, "/") {
		full += "/**"
	}
	return full, false
}

func matchPathLexical(pattern, file, cwd, home string) bool {
	full, anywhere := fullPattern(pattern, cwd, home)
	if anywhere {
		if strings.HasSuffix(pattern, "/**") {
			// dir/** anywhere: any file under a directory of that name.
			dir := strings.TrimSuffix(pattern, "/**")
			for d := filepath.Dir(file); d != "/" && d != "."; d = filepath.Dir(d) {
				if ok, _ := path.Match(dir, filepath.Base(d)); ok {
					return true
				}
			}
			return false
		}
		ok, _ := path.Match(pattern, filepath.Base(file))
		return ok
	}
	return matchSegments(strings.Split(strings.Trim(full, "/"), "/"), strings.Split(strings.Trim(file, "/"), "/"))
}

// mayHold reports whether a file the pattern matches may lie under dir:
// the pattern's literal directory and dir are one inside the other.
func (c Call) mayHold(pattern, dir string) bool {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.Cwd, dir)
	}
	for _, d := range c.variants(filepath.Clean(dir)) {
		for _, cwd := range c.variants(c.Cwd) {
			for _, h := range c.variants(c.Home) {
				full, anywhere := fullPattern(pattern, cwd, h)
				if anywhere {
					return true
				}
				lit := "/"
				for _, seg := range strings.Split(strings.Trim(full, "/"), "/") {
					if strings.ContainsAny(seg, "*?[") {
						break
					}
					lit = filepath.Join(lit, seg)
				}
				if within(lit, d) || within(d, lit) {
					return true
				}
			}
		}
	}
	return false
}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
