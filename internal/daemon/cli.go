package daemon

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// One style on every screen: flags are written --flag, in the usage line
// and in the list below it alike; help is printed once, to stdout.

// newFlags returns a command's flag set; its usage is the synopsis (after
// "ccbridge "), the summary, and the flags as --flag.
func newFlags(name, synopsis, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ccbridge %s\n\n%s\n", synopsis, summary)
		printFlags(fs.Output(), fs)
	}
	return fs
}

// printFlags lists the flags as "--name VALUE  usage (default …)". The
// value's name is the usage's `quoted` word, as in flag.PrintDefaults.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var rows [][2]string
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if value != "" {
			left += " " + value
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += " (default " + f.DefValue + ")"
		}
		width = max(width, len(left))
		rows = append(rows, [2]string{left, usage})
	})
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r[0], strings.ReplaceAll(r[1], "\n", "\n  "+strings.Repeat(" ", width+2)))
	}
}

// configUsage is the --config flag's usage, the same everywhere.
const configUsage = "config `FILE`; else $CCBRIDGE_CONFIG, else ~/.config/ccbridge/config.toml"

// parseFlags parses a command's flags. Help goes to stdout, once, and
// exits 0; a bad flag (reported by the flag set, then the usage, on
// stderr) or a stray argument is a usage error. When ok is false the
// command returns code.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, name string) (code int, ok bool) {
	usage := fs.Usage
	// flag.Parse prints the usage itself on -h; it is printed below, to
	// the right stream, instead.
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			usage()
			return exitOK, false
		}
		fmt.Fprintln(stderr)
		usage()
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ccbridge %s: unexpected argument %q\n", name, fs.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}

// globalConfig takes a --config given before the command ("ccbridge
// --config FILE doctor"); ok is false when its value is missing.
func globalConfig(args []string) (path string, rest []string, ok bool) {
	for len(args) > 0 {
		a := args[0]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" || a == "-" || a == "--" {
			return path, args, true
		}
		if hasValue {
			path, args = value, args[1:]
			continue
		}
		if len(args) < 2 {
			return "", nil, false
		}
		path, args = args[1], args[2:]
	}
	return path, args, true
}

// withConfig passes a global --config on to the command, where the
// command's own flags are parsed.
func withConfig(path string, args []string) []string {
	if path == "" || len(args) == 0 {
		return args
	}
	pos := 1 // after the command
	switch args[0] {
	case "config", "service":
		pos = 2 // after its action
	case "uninstall-hooks", "version", "--version", "help", "-h", "--help":
		return args // no config involved
	}
	if len(args) < pos {
		return args
	}
	out := append([]string{}, args[:pos]...)
	out = append(out, "--config", path)
	return append(out, args[pos:]...)
}
