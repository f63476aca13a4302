package daemon

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/ccbridge/ccbridge/internal/logfile"
)

// runFlags parses `ccbridge run`'s flags: --config, --log-file (the daemon
// logs there as well as to stderr, rotated by size: what a service uses)
// and --debug.
func runFlags(args []string, stdout, stderr io.Writer) (cfgPath, logFile string, debug bool, code int, ok bool) {
	fs := newFlags("run", "run [--config FILE] [--log-file FILE] [--debug]", "Connect every configured bot and serve until interrupted.")
	fs.StringVar(&cfgPath, "config", "", configUsage)
	fs.StringVar(&logFile, "log-file", "", fmt.Sprintf("also log to `FILE` (mode 0600), rotated at %d MiB keeping %d old files", logfile.DefaultMaxSize>>20, logfile.DefaultKeep))
	fs.BoolVar(&debug, "debug", false, "log debug messages too")
	if code, ok := parseFlags(fs, args, stdout, stderr, "run"); !ok {
		return "", "", false, code, false
	}
	return cfgPath, logFile, debug, exitOK, true
}

// runOutput returns where the daemon writes: stderr, plus the rotated log
// file when one is given. Everything, the config's problems included, goes
// to both, so a service's file tells why it stopped.
func runOutput(stderr io.Writer, logFile string) (io.Writer, func(), error) {
	if logFile == "" {
		return stderr, func() {}, nil
	}
	f, err := logfile.Open(logFile, logfile.DefaultMaxSize, logfile.DefaultKeep)
	if err != nil {
		return nil, nil, err
	}
	return io.MultiWriter(stderr, f), func() { _ = f.Close() }, nil
}

// newLogger is the daemon's logger.
func newLogger(w io.Writer, debug bool) *slog.Logger {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
