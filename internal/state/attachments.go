package state

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Attachment copies: a reply's [DISCORD_ATTACH] files are copied into the
// private runtime directory when their markers are checked, and every later
// upload (by the hook, or by the daemon from the outbox hours later) reads
// the copy. What is uploaded is then what was checked, whatever happens to
// the outputs folder meanwhile (a symlink swapped in, a file rewritten).

const attachDir = "outbox-files"

// NotAttachableError is returned (wrapped) for a file that must not be
// uploaded: not a regular file, more than one hard link, or too large.
type NotAttachableError struct {
	Reason string // "has other hard links", for the note shown to the person
}

func (e *NotAttachableError) Error() string { return "not attachable: it " + e.Reason }

func notAttachable(name, reason string) error {
	return fmt.Errorf("attach %s: %w", name, &NotAttachableError{Reason: reason})
}

// CopyAttachment opens name inside dir (the outputs folder) without leaving
// it, checks that it is a regular file with a single link and at most limit
// bytes, and copies it into the runtime directory. It returns the copy's
// path, whose base name is the file's.
func (d *Dir) CopyAttachment(dir, name string, limit int64) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("attach %s: %w", name, err)
	}
	defer root.Close()
	before, err := root.Lstat(name)
	if err != nil {
		return "", fmt.Errorf("attach %s: %w", name, err)
	}
	if !before.Mode().IsRegular() {
		return "", notAttachable(name, "is not a regular file")
	}
	// O_NONBLOCK: a FIFO swapped in must not hang the open.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("attach %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("attach %s: %w", name, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !os.SameFile(before, fi) || !fi.Mode().IsRegular():
		// Swapped between the check and the open (Root follows a final
		// symlink that stays inside dir; this refuses it).
		return "", notAttachable(name, "changed while it was opened")
	case !ok || st.Nlink != 1:
		return "", notAttachable(name, "has other hard links")
	case fi.Size() > limit:
		return "", notAttachable(name, fmt.Sprintf("is larger than %d bytes", limit))
	}
	parent, err := d.subdir(attachDir)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, "a-")
	if err != nil {
		return "", fmt.Errorf("attach %s: %w", name, err)
	}
	dst := filepath.Join(tmp, filepath.Base(name))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("attach %s: %w", name, err)
	}
	n, err := io.Copy(out, io.LimitReader(f, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		os.RemoveAll(tmp)
		return "", notAttachable(name, fmt.Sprintf("grew past %d bytes", limit))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("attach %s: %w", name, err)
	}
	return dst, nil
}

// attachmentDir returns the directory of a copy made by CopyAttachment, or
// an error if path is not one.
func (d *Dir) attachmentDir(path string) (string, error) {
	parent := filepath.Join(d.root, attachDir)
	dir := filepath.Dir(filepath.Clean(path))
	if filepath.Dir(dir) != parent || !strings.HasPrefix(filepath.Base(dir), "a-") {
		return "", fmt.Errorf("%s is not an attachment copy in the runtime directory", path)
	}
	return dir, nil
}

// ReadAttachment reads a copy made by CopyAttachment (never a symlink, never
// a path outside the runtime directory's copies).
func (d *Dir) ReadAttachment(path string) ([]byte, error) {
	dir, err := d.attachmentDir(path)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.Base(path), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read attachment %s: not a regular file", path)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	return b, nil
}

// RemoveAttachment deletes a copy made by CopyAttachment once it is posted.
func (d *Dir) RemoveAttachment(path string) error {
	dir, err := d.attachmentDir(path)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove attachment: %w", err)
	}
	return nil
}
