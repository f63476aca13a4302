package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Prune deletes the records last written before cutoff and, beyond that,
// the oldest ones past the newest max (max <= 0: no count limit). Records
// moved aside by the quarantine go after the same cutoff. It reports how
// many files it removed. It is for collections whose records are written
// once and then only read (turns), where the file's mtime is its age.
func (c *collection) Prune(ctx context.Context, cutoff time.Time, max int) (int, error) {
	if err := c.d.Verify(); err != nil {
		return 0, err
	}
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", filepath.Base(c.dir), err)
	}
	type rec struct {
		key string
		mod time.Time
	}
	var recs []rec
	removed := 0
	var errs []error
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // gone since ReadDir
		}
		if strings.Contains(e.Name(), ".corrupt-") {
			if fi.ModTime().Before(cutoff) {
				if err := os.Remove(filepath.Join(c.dir, e.Name())); err == nil {
					removed++
				}
			}
			continue
		}
		if key, ok := keyOf(e.Name()); ok {
			recs = append(recs, rec{key, fi.ModTime()})
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].mod.After(recs[j].mod) })
	for i, r := range recs {
		if r.mod.After(cutoff) && (max <= 0 || i < max) {
			continue
		}
		if err := c.Delete(ctx, r.key); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// RotateLog renames logs/<name> to <name>.1 (replacing the previous one)
// once it is larger than max bytes, so a log keeps at most about twice
// that. Hooks open the log for appending on every run, so the next one
// starts the new file; one still running finishes in the old.
func (d *Dir) RotateLog(name string, max int64) (bool, error) {
	if err := d.Verify(); err != nil {
		return false, err
	}
	p := filepath.Join(d.root, "logs", filepath.Base(name))
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("rotate log: %w", err)
	}
	if fi.Size() <= max {
		return false, nil
	}
	if err := os.Rename(p, p+".1"); err != nil {
		return false, fmt.Errorf("rotate log: %w", err)
	}
	return true, nil
}

// PruneSessionFiles bounds the uploads and outputs folders: it deletes
// files last modified before cutoff, then the oldest files until all of
// them together take at most maxBytes (maxBytes <= 0: no size limit), and
// finally session folders left empty and untouched since cutoff. keep
// (may be nil) spares files still needed, such as the attachments of a
// reply that waits in the outbox.
func (d *Dir) PruneSessionFiles(cutoff time.Time, maxBytes int64, keep func(path string) bool) (int, error) {
	if err := d.Verify(); err != nil {
		return 0, err
	}
	type file struct {
		path string
		mod  time.Time
		size int64
	}
	var files, dirs []file
	for _, kind := range []string{"uploads", "outputs"} {
		parent := d.sessionParent(kind)
		sessions, err := os.ReadDir(parent)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("prune %s: %w", kind, err)
		}
		for _, s := range sessions {
			if !s.IsDir() {
				continue
			}
			dir := filepath.Join(parent, s.Name())
			if fi, err := s.Info(); err == nil { // before its files go
				dirs = append(dirs, file{dir, fi.ModTime(), 0})
			}
			_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return nil
				}
				if fi, err := e.Info(); err == nil {
					files = append(files, file{p, fi.ModTime(), fi.Size()})
				}
				return nil
			})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	removed := 0
	var total int64
	var errs []error
	for _, f := range files {
		if keep != nil && keep(f.path) {
			total += f.size
			continue
		}
		if f.mod.After(cutoff) && (maxBytes <= 0 || total+f.size <= maxBytes) {
			total += f.size
			continue
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	for _, dir := range dirs {
		if dir.mod.After(cutoff) {
			continue
		}
		if err := os.Remove(dir.path); err == nil { // only when empty
			removed++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("prune files: %w", err)
	}
	return removed, nil
}
