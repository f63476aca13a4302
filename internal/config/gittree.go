package config

import (
	"os"
	"path/filepath"
)

// GitWorkTree returns the top of the git work tree holding dir (symlinks
// resolved, as a write through them lands there), or "". Secrets (token
// files) must not be written there: they would be one `git add` from being
// published, as with a config dir linked into a dotfiles repository.
func GitWorkTree(dir string) string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		// Not there yet: its nearest existing parent decides.
		if parent := filepath.Dir(dir); parent != dir {
			return GitWorkTree(parent)
		}
		return ""
	}
	for d := real; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}
