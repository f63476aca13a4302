package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// What install writes is undone when the service manager refuses it: the
// files it replaced come back as they were, the ones it added go, so a
// failed install leaves no half-installed service behind.

type fileWrite struct {
	path string
	text string
	perm os.FileMode
}

// previous is a file as it was before install wrote it.
type previous struct {
	path    string
	existed bool
	data    []byte
	perm    os.FileMode
}

// writeFiles writes each file and returns how to put them back; a write
// that fails puts back those already written.
func writeFiles(ws []fileWrite) (restore func() error, err error) {
	var prev []previous
	restore = func() error {
		var errs []error
		for _, p := range prev {
			if p.existed {
				errs = append(errs, writeFile(p.path, string(p.data), p.perm))
			} else if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for _, w := range ws {
		p := previous{path: w.path}
		if b, err := os.ReadFile(w.path); err == nil {
			fi, _ := os.Stat(w.path)
			p.existed, p.data, p.perm = true, b, fi.Mode().Perm()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, errors.Join(fmt.Errorf("read %s: %w", w.path, err), restore())
		}
		if err := writeFile(w.path, w.text, w.perm); err != nil {
			return nil, errors.Join(fmt.Errorf("write %s: %w", w.path, err), restore())
		}
		prev = append(prev, p)
	}
	return restore, nil
}

// whyNotRunning says why an installed service is not running: the
// service manager cannot be reached, or the daemon's own last words in its
// log file (a refused token, a config problem).
func whyNotRunning(o Options, status string, out io.Writer) {
	if strings.Contains(status, "Failed to connect to bus") {
		fmt.Fprintln(out, "why: systemd's user manager cannot be reached from this shell (no user session, e.g. over su or sudo):\n"+
			"  log in as the user directly, or run `loginctl enable-linger "+o.User+"` and try again")
		return
	}
	b, err := os.ReadFile(o.LogFile)
	if err != nil {
		fmt.Fprintf(out, "why: %s does not exist yet, so the daemon never started; ", o.LogFile)
		if o.OS == "linux" {
			fmt.Fprintln(out, "`journalctl --user -u ccbridge` says why")
		} else {
			fmt.Fprintln(out, "`launchctl print gui/"+fmt.Sprint(o.UID)+"/"+Label+"` says why")
		}
		return
	}
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(b, nil)), "\n"), "\n")
	lines = lines[max(0, len(lines)-5):]
	fmt.Fprintf(out, "why: the last lines of %s:\n", o.LogFile)
	for _, l := range lines {
		fmt.Fprintln(out, "  "+l)
	}
}

// rollback undoes a systemd install that systemctl refused: it disables
// a unit it enabled that did not exist before, puts the files back, and
// has systemd read them again when it had read the new ones.
func (o Options) rollback(ctx context.Context, restore func() error, unitExisted, enabled, reloaded bool) error {
	var errs []error
	if enabled && !unitExisted {
		if _, err := o.run(ctx, "systemctl", "--user", "disable", Unit); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, restore())
	if reloaded {
		if _, err := o.run(ctx, "systemctl", "--user", "daemon-reload"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
