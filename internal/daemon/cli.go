package daemon

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
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

// dashDash finds the "-name" of a flag in the flag package's errors
// ("flag provided but not defined: -bogus", "invalid value … for flag
// -wait"), to write it as everywhere else: --bogus.
var dashDash = regexp.MustCompile(`(: |flag )-(\w)`)

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
	// The flag set's own message writes -flag; it is reworded below.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			usage()
			return exitOK, false
		}
		fmt.Fprintf(stderr, "%s\n\n", dashDash.ReplaceAllString(err.Error(), "$1--$2"))
		fs.SetOutput(stderr)
		usage()
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ccbridge %s: unexpected argument %q\n", name, fs.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}

// globalConfig takes the global --config out of the arguments, wherever
// it is: before the command, after it, or after a subcommand ("ccbridge
// config --config FILE check"), up to a "--". The last one wins, as with
// any flag; ok is false when its value is missing.
func globalConfig(args []string) (path string, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return path, append(rest, args[i:]...), true
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			rest = append(rest, a)
			continue
		}
		if hasValue {
			path = value
			continue
		}
		if i+1 == len(args) {
			return "", nil, false
		}
		path = args[i+1]
		i++
	}
	return path, rest, true
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
		return args // accepted, as everywhere, but no config is involved
	}
	if len(args) < pos {
		return args
	}
	out := append([]string{}, args[:pos]...)
	out = append(out, "--config", path)
	return append(out, args[pos:]...)
}
