package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/setup"
	"github.com/ccbridge/ccbridge/internal/state"
)

// stdin is where setup reads answers; a variable for tests.
var stdin io.Reader = os.Stdin

func cmdSetup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("setup", "setup [--telegram] [--config FILE] [--wait DURATION]",
		"Walk through everything in the terminal: the bot token (hidden input), the Message Content intent,\n"+
			"the invite URL, the server, the owners, channels → project directories, and the control panel's\n"+
			"channel (a channel setup creates is visible to the owners and the bot only); then write the config\n"+
			"and the token file (both 0600) and check them. Re-running it edits the config and keeps every key in\n"+
			"it; the token of a bot the config has edits that bot's entry, another bot's adds a new entry.\n"+
			"Comments are not kept: the first run saves the file it replaces as <config>.bak, and later runs keep\n"+
			"that backup.\n"+
			"With --telegram it sets up a Telegram bot instead: the token from @BotFather, the forum group found\n"+
			"from a message you send there (you become its owner), and a new topic for each project directory.")
	cfgPath := fs.String("config", "", "config `FILE` to create or edit; else $CCBRIDGE_CONFIG, else ~/.config/ccbridge/config.toml")
	wait := fs.Duration("wait", setup.DefaultWait, "how long to wait for the bot to join a server (a `DURATION` like 10m)")
	tg := fs.Bool("telegram", false, "set up a Telegram bot (a forum group, a topic per project) instead of a Discord one")
	poll := fs.Duration("poll", setup.DefaultPollEvery, "while waiting, how often to check whether the bot has joined (a `DURATION` like 5s)")
	if code, ok := parseFlags(fs, args, stdout, stderr, "setup"); !ok {
		return code
	}
	path, err := config.DefaultPath(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return exitError
	}
	o := setup.Options{ConfigPath: path, In: stdin, Out: stdout, Wait: *wait, PollEvery: max(*poll, 10*time.Millisecond), DaemonRunning: daemonRunning, Telegram: *tg}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.ReadSecret = func(ctx context.Context) (string, error) { return readPassword(ctx, int(f.Fd())) }
	}
	if err := setup.Run(ctx, o); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "ccbridge setup: interrupted; nothing was written")
			return exitError
		}
		fmt.Fprintln(stderr, "ccbridge setup:", err)
		return exitError
	}
	return exitOK
}

// daemonRunning reports whether a daemon holds the runtime directory's
// lock, as doctor finds out.
func daemonRunning() bool {
	root := state.DefaultRuntimeDir()
	if _, err := os.Lstat(root); err != nil {
		return false
	}
	dir, err := state.Open(root)
	if err != nil {
		return false
	}
	unlock, err := dir.LockDaemon()
	if err == nil {
		_ = unlock()
	}
	return errors.Is(err, state.ErrDaemonRunning)
}

// readPassword reads a line without echo. Ctrl-C (which ends ctx: the
// signal is caught) puts the terminal back as it was before returning, so
// the shell does not stay without echo.
func readPassword(ctx context.Context, fd int) (string, error) {
	saved, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		return string(r.b), r.err
	case <-ctx.Done():
		_ = term.Restore(fd, saved)
		return "", ctx.Err()
	}
}
