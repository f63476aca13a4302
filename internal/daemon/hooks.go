package daemon

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// cmdHooks runs install-hooks (install = true) and uninstall-hooks: they
// register ccbridge's hooks in Claude Code's user settings, for sessions
// started by hand in a project's directory. Sessions ccbridge starts do not
// need them.
func cmdHooks(install bool, args []string, stdout, stderr io.Writer) int {
	name := "uninstall-hooks"
	summary := "Remove ccbridge's hooks from Claude Code's user settings; other hooks are left alone."
	if install {
		name = "install-hooks"
		summary = "Register ccbridge's hooks in Claude Code's user settings, so sessions started by hand in a\n" +
			"project directory report to its channel. Safe to run again; a backup of the file is kept."
	}
	synopsis := name + " [--settings FILE]"
	if install {
		synopsis += " [--config FILE]"
	}
	flags := newFlags(name, synopsis, summary)
	settings := flags.String("settings", "", "Claude Code settings `FILE` (default ~/.claude/settings.json)")
	cfgPath := new(string) // only install reads the config (prompt_timeout)
	if install {
		cfgPath = flags.String("config", "", "config `FILE`, for prompt_timeout; else $CCBRIDGE_CONFIG, else ~/.config/ccbridge/config.toml")
	}
	if code, ok := parseFlags(flags, args, stdout, stderr, name); !ok {
		return code
	}
	path := *settings
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			fmt.Fprintln(stderr, "ccbridge:", err)
			return exitError
		}
		path = filepath.Join(home, ".claude", "settings.json")
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return exitError
	}
	existed := err == nil
	var out []byte
	var changed bool
	if install {
		stop, pretool, err := session.HookBinaries()
		if err != nil {
			fmt.Fprintln(stderr, "ccbridge:", err)
			return exitError
		}
		out, changed, err = claudehook.AddGlobalHooks(old, stop, pretool, promptTimeout(*cfgPath))
		if err != nil {
			fmt.Fprintf(stderr, "ccbridge: %s: %v\n", path, err)
			return exitError
		}
		if _, ours, _, _ := claudehook.RemoveGlobalHooks(old, nil); changed && !ours {
			rememberShape(path, claudehook.ShapeOf(old))
		}
	} else {
		var empty bool
		out, changed, empty, err = claudehook.RemoveGlobalHooks(old, shapeBefore(path))
		if err != nil {
			fmt.Fprintf(stderr, "ccbridge: %s: %v\n", path, err)
			return exitError
		}
		if changed && empty && createdByUs(path) {
			// ccbridge made this file: take it away rather than leave {}.
			if err := os.Remove(path); err != nil {
				fmt.Fprintln(stderr, "ccbridge:", err)
				return exitError
			}
			forgetCreated(path)
			forgetShape(path)
			fmt.Fprintf(stdout, "removed %s, which install-hooks had created\n", path)
			return exitOK
		}
		if changed {
			forgetCreated(path) // it holds the user's settings now
		}
	}
	if !changed {
		if install {
			fmt.Fprintf(stdout, "ccbridge hooks are already registered in %s; nothing changed\n", path)
		} else {
			fmt.Fprintf(stdout, "no ccbridge hooks in %s; nothing changed\n", path)
		}
		return exitOK
	}
	if err := writeSettings(path, old, out, existed, stdout); err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return exitError
	}
	if install {
		fmt.Fprintf(stdout, "registered ccbridge hooks in %s\n", path)
	} else {
		forgetShape(path) // the file is as it was before install
		fmt.Fprintf(stdout, "removed ccbridge hooks from %s\n", path)
	}
	return exitOK
}

// writeSettings backs up the old file and replaces it atomically, keeping its mode.
func writeSettings(path string, old, out []byte, existed bool, stdout io.Writer) error {
	perm := os.FileMode(0o600)
	if existed {
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
		backup, err := backUp(path, old, perm)
		if err != nil {
			return fmt.Errorf("back up %s: %w", path, err)
		}
		fmt.Fprintf(stdout, "backup: %s\n", backup)
		pruneBackups(path, keepBackups)
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := state.WriteAtomic(path, out, perm); err != nil {
		return err
	}
	if !existed {
		rememberCreated(path)
	}
	return nil
}

// backUp writes old to a backup file of its own: never one an earlier run
// wrote, even within the same second.
func backUp(path string, old []byte, perm os.FileMode) (string, error) {
	base := path + ".ccbridge-backup-" + time.Now().Format("20060102T150405")
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(old)
		if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
}

// keepBackups is how many of its backups of a settings file ccbridge
// keeps: each install and uninstall writes one.
const keepBackups = 3

// backupName matches the names backUp gives: <file>.ccbridge-backup-<time>[-n].
var backupName = regexp.MustCompile(`\.ccbridge-backup-(\d{8}T\d{6})(?:-(\d+))?$`)

// pruneBackups removes all but the newest keep of ccbridge's backups of
// path; files of other names are left alone.
func pruneBackups(path string, keep int) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return
	}
	type backup struct {
		name, at string
		n        int
	}
	var bs []backup
	prefix := filepath.Base(path)
	for _, e := range entries {
		m := backupName.FindStringSubmatch(e.Name())
		if m == nil || e.Name()[:len(e.Name())-len(m[0])] != prefix {
			continue
		}
		n, _ := strconv.Atoi(m[2]) // "" (the first of its second) is 0
		bs = append(bs, backup{e.Name(), m[1], n})
	}
	slices.SortFunc(bs, func(a, b backup) int {
		return cmp.Or(strings.Compare(a.at, b.at), cmp.Compare(a.n, b.n))
	})
	for _, b := range bs[:max(0, len(bs)-keep)] {
		_ = os.Remove(filepath.Join(filepath.Dir(path), b.name))
	}
}

// shapesFile is the record, in ccbridge's state dir, of what each settings
// file held of hooks before install-hooks added ccbridge's (absolute path
// → claudehook.Shape), for uninstall-hooks to keep.
func shapesFile() string {
	dir, err := state.DurableDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "settings-shapes.json")
}

func readShapes() map[string]claudehook.Shape {
	shapes := map[string]claudehook.Shape{}
	if b, err := os.ReadFile(shapesFile()); err == nil {
		_ = json.Unmarshal(b, &shapes)
	}
	return shapes
}

func writeShapes(shapes map[string]claudehook.Shape) {
	f := shapesFile()
	if f == "" {
		return
	}
	if len(shapes) == 0 {
		_ = os.Remove(f)
		return
	}
	if b, err := json.Marshal(shapes); err == nil && os.MkdirAll(filepath.Dir(f), 0o700) == nil {
		_ = state.WriteAtomic(f, b, 0o600)
	}
}

// shapeBefore is path's recorded Shape; nil when there is none (hooks
// installed by an older ccbridge), and uninstall removes what it empties.
func shapeBefore(path string) *claudehook.Shape {
	if sh, ok := readShapes()[absPath(path)]; ok {
		return &sh
	}
	return nil
}

func rememberShape(path string, sh claudehook.Shape) {
	shapes := readShapes()
	shapes[absPath(path)] = sh
	writeShapes(shapes)
}

func forgetShape(path string) {
	shapes := readShapes()
	if _, ok := shapes[absPath(path)]; ok {
		delete(shapes, absPath(path))
		writeShapes(shapes)
	}
}

// createdList is the record, in ccbridge's state dir, of the settings
// files install-hooks created (one path a line).
func createdList() string {
	dir, err := state.DurableDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "created-settings")
}

func createdPaths() []string {
	b, err := os.ReadFile(createdList())
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(strings.Split(string(b), "\n"), func(p string) bool { return p == "" })
}

func createdByUs(path string) bool { return slices.Contains(createdPaths(), absPath(path)) }

func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

func rememberCreated(path string) {
	path = absPath(path)
	if list := createdList(); list != "" && !createdByUs(path) {
		_ = os.MkdirAll(filepath.Dir(list), 0o700)
		_ = state.WriteAtomic(list, []byte(strings.Join(append(createdPaths(), path), "\n")+"\n"), 0o600)
	}
}

func forgetCreated(path string) {
	path = absPath(path)
	if list := createdList(); list != "" && createdByUs(path) {
		kept := slices.DeleteFunc(createdPaths(), func(p string) bool { return p == path })
		_ = state.WriteAtomic(list, []byte(strings.Join(kept, "\n")+"\n"), 0o600)
	}
}

// promptTimeout reads [claude].prompt_timeout when a config is at hand.
func promptTimeout(flagPath string) time.Duration {
	if path, err := config.DefaultPath(flagPath); err == nil {
		if cfg, err := config.Load(path); err == nil {
			return cfg.Claude.PromptTimeout.Duration
		}
	}
	return config.DefaultPromptTimeout
}
