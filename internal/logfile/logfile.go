// Package logfile is the daemon's log file when it runs as a service: an
// append-only file that rotates when it grows past a size, keeping a few
// old files (name.1 is the newest of them). It imports no other internal
// package.
package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Defaults: rotate at 10 MiB, keep two old files.
const (
	DefaultMaxSize = 10 << 20
	DefaultKeep    = 2
)

// File is a size-bounded log file, safe for concurrent writes.
type File struct {
	mu      sync.Mutex
	path    string
	maxSize int64
	keep    int
	f       *os.File
	size    int64
}

// Open opens (creating with mode 0600, in a 0700 directory if needed) the
// log file at path for appending.
func Open(path string, maxSize int64, keep int) (*File, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	if keep < 1 {
		keep = 1
	}
	l := &File{path: path, maxSize: maxSize, keep: keep}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *File) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("log file: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past the
// size bound (a file is never rotated while empty, so one huge write still
// lands).
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	if l.size > 0 && l.size+int64(len(p)) > l.maxSize {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate shifts name.(k) to name.(k+1), dropping the oldest, and starts a
// new file; caller holds l.mu.
func (l *File) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	l.f = nil
	_ = os.Remove(fmt.Sprintf("%s.%d", l.path, l.keep))
	for k := l.keep - 1; k >= 1; k-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", l.path, k), fmt.Sprintf("%s.%d", l.path, k+1))
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	return l.open()
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
