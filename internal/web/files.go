package web

import (
	"bytes"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxEntries bounds a folder listing.
const maxEntries = 2000

type fileEntry struct {
	Name, Path, Size string
	Dir              bool
}

type crumb struct{ Name, Path string }

// serveFiles shows the session's folder, read-only. A path is refused
// (403, like a bad link) when it names anything outside the folder — by
// "..", an absolute path or a symlink out — a file the session's policy
// denies reading, a private file (runtime, config, token, state) or a .git
// folder. Within those bounds, os.Root opens the file, so a symlink
// swapped in after the checks still cannot lead out.
func (h *Handler) serveFiles(w http.ResponseWriter, r *http.Request, s Session, pg page, rel string) {
	pg.Page = "files"
	if s.Dir == "" {
		http.NotFound(w, r)
		return
	}
	root, err := filepath.EvalSymlinks(s.Dir)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	clean, ok := cleanRel(rel)
	if !ok {
		refuse(w)
		return
	}
	full := filepath.Join(root, filepath.FromSlash(clean))
	named := filepath.Join(s.Dir, filepath.FromSlash(clean))
	// Judged before the lookup too, so a 404 never tells which names
	// exist where reading is denied.
	if !h.readable(s, named, full) {
		refuse(w)
		return
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			http.NotFound(w, r)
			return
		}
		refuse(w)
		return
	}
	if !within(root, real) || inGit(root, real) || !h.readable(s, full, real) {
		refuse(w)
		return
	}
	inRoot, _ := filepath.Rel(root, real)
	rt, err := os.OpenRoot(root)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer rt.Close()
	f, err := rt.Open(inRoot)
	if err != nil {
		refuse(w)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	data := struct {
		page
		Root    string
		Crumbs  []crumb
		Entries []fileEntry
		Lines   []template.HTML
		Note    string
	}{page: pg, Root: filepath.Base(root)}
	data.Crumbs = crumbs(clean, fi.IsDir())
	switch {
	case fi.IsDir():
		if rel != "" && !strings.HasSuffix(rel, "/") {
			redirect(w, "./"+escPath(lastSegment(clean))+"/")
			return
		}
		data.Entries, data.Note = h.list(s, root, real, clean, f)
	case !fi.Mode().IsRegular():
		data.Note = "Not a regular file."
	case fi.Size() > h.opt.MaxFileBytes:
		data.Note = "Too large to show here: " + size(fi.Size()) + " (the limit is " + size(h.opt.MaxFileBytes) + ")."
	default:
		b, err := io.ReadAll(io.LimitReader(f, h.opt.MaxFileBytes+1))
		switch {
		case err != nil:
			data.Note = "Could not read the file."
		case int64(len(b)) > h.opt.MaxFileBytes:
			data.Note = "Too large to show here (the limit is " + size(h.opt.MaxFileBytes) + ")."
		case bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 || !utf8.Valid(b):
			data.Note = "Binary file, not shown (" + size(fi.Size()) + ")."
		default:
			data.Lines = highlightLines(real, h.opt.Redact(string(b)))
		}
	}
	h.render(w, "files", data)
}

// cleanRel accepts a relative slash path with no ".." and no ".git"
// segment (a repository's config may hold a remote's credentials); "" is
// the folder itself.
func cleanRel(rel string) (string, bool) {
	if strings.ContainsAny(rel, "\x00\\") || strings.HasPrefix(rel, "/") {
		return "", false
	}
	var parts []string
	for _, p := range strings.Split(rel, "/") {
		switch p {
		case "", ".":
		case "..", ".git":
			return "", false
		default:
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/"), true
}

// within reports whether p is dir or below it, on a separator boundary.
// inGit reports whether p, resolved, is in a .git folder under root
// (reached through a symlink: the name asked for passed cleanRel). Case
// is folded, as macOS's file system does.
func inGit(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return true
	}
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.EqualFold(seg, ".git") {
			return true
		}
	}
	return false
}

func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// readable: not private, not denied by the policy, under any of the
// names given (as named, and resolved).
func (h *Handler) readable(s Session, paths ...string) bool {
	for _, p := range paths {
		for _, priv := range h.private {
			if within(priv, p) {
				return false
			}
		}
		if h.opt.ReadDenied(s, p) {
			return false
		}
	}
	return true
}

// list lists a folder, leaving out what could not be opened: .git, private
// or denied entries, and symlinks leading out of the session's folder.
func (h *Handler) list(s Session, root, dir, rel string, f *os.File) ([]fileEntry, string) {
	ents, err := f.ReadDir(maxEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "Could not list the folder."
	}
	note := ""
	if len(ents) > maxEntries {
		ents, note = ents[:maxEntries], "Only the first "+strconv.Itoa(maxEntries)+" entries are listed."
	}
	var out []fileEntry
	for _, e := range ents {
		if e.Name() == ".git" {
			continue
		}
		full := filepath.Join(dir, e.Name())
		real := full
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			t, err := filepath.EvalSymlinks(full)
			if err != nil || !within(root, t) || inGit(root, t) {
				continue
			}
			real = t
			if fi, err := os.Stat(t); err == nil {
				isDir = fi.IsDir()
			}
		}
		if !h.readable(s, full, real) {
			continue
		}
		p := escPath(e.Name())
		if rel != "" {
			p = escPath(rel) + "/" + p
		}
		fe := fileEntry{Name: e.Name(), Path: p, Dir: isDir}
		if isDir {
			fe.Path += "/"
		} else if fi, err := e.Info(); err == nil {
			fe.Size = size(fi.Size())
		}
		out = append(out, fe)
	}
	slices.SortFunc(out, func(a, b fileEntry) int {
		if a.Dir != b.Dir {
			if a.Dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, note
}

// escPath escapes each segment of a slash path for a link.
func escPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func crumbs(rel string, dir bool) []crumb {
	if rel == "" {
		return nil
	}
	var out []crumb
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		c := crumb{Name: p, Path: escPath(strings.Join(parts[:i+1], "/"))}
		if i < len(parts)-1 || dir {
			c.Path += "/"
		}
		out = append(out, c)
	}
	return out
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// resolvedAll returns each path and, when it differs, its resolved form.
func resolvedAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		out = append(out, p)
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	return out
}

func lastSegment(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
