package policy

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Bash rules are matched against what a command runs, not only how it is
// written: quotes are removed, wrappers (sudo, env, nice, timeout,
// command, …) and git's global options (-C, -c) are dropped, a program
// named by its path or escaped (/usr/bin/git, \git) counts as its name,
// rm's flags are compared as a set (rm -fr, rm -r -f), and the commands of
// sh -c, eval, find -exec and $(…) are judged too. What stays hidden (sh -c
// "$X", a shell reading stdin, xargs feeding a governed program) cannot be
// judged, and is asked about. This is a guard against accidents, not a
// boundary: a shell has more ways to run a program than any list.

// maxDepth bounds how deep sh -c and eval nest before the command is
// called unjudgeable.
const maxDepth = 4

// simple is one simple command, after quote removal.
type simple struct {
	words         []string
	dyn           []bool // the word holds an expansion ($X, $(…), `…`)
	globs         []bool // the word holds an unquoted wildcard
	reads, writes []string
	// opaque: it runs text the policy cannot see (sh reading stdin,
	// sh -c "$X", a program named by a variable).
	opaque bool
	// partial: more arguments come from stdin (xargs).
	partial bool
}

// judgeCommand judges a Bash specifier against a command and each of the
// simple commands it runs. `*` matches any text; a trailing ` *` (or the
// legacy `:*`) also matches the bare command.
func (c Call) judgeCommand(spec string) outcome {
	cmd := c.str("command")
	spec = strings.TrimSpace(spec)
	if strings.HasSuffix(spec, ":*") {
		spec = strings.TrimSuffix(spec, ":*") + " *"
	}
	// The text as written, split at operators without regard to quotes:
	// a split inside a quoted string only adds candidates.
	for _, sub := range append([]string{cmd}, subcommands(cmd)...) {
		if specMatches(spec, strings.Join(strings.Fields(sub), " ")) {
			return yes
		}
	}
	cmds, ok := c.commands()
	if !ok {
		return unsure
	}
	specWords := canonical(strings.Fields(spec))
	res := no
	for _, s := range cmds {
		if s.opaque {
			res = unsure
			continue
		}
		words := fitFlags(specWords, s.words)
		if specMatches(strings.Join(specWords, " "), strings.Join(words, " ")) {
			return yes
		}
		if s.partial && len(specWords) > 0 && len(words) > 0 && (specWords[0] == words[0] || specWords[0] == "*") {
			res = unsure
		}
	}
	return res
}

func specMatches(spec, s string) bool {
	if s == "" {
		return false
	}
	return glob(spec, s) || (strings.HasSuffix(spec, " *") && s == strings.TrimSuffix(spec, " *"))
}

// subcommands splits a shell command at its control operators. It does not
// parse quotes: a split inside a quoted string only adds candidates, which
// can make a rule match more often, never less.
func subcommands(cmd string) []string {
	f := func(r rune) bool {
		return r == ';' || r == '|' || r == '&' || r == '\n' || r == '(' || r == ')' || r == '`'
	}
	parts := strings.FieldsFunc(cmd, f)
	// A leading "sudo", "env X=1" or "time" still runs the command after it.
	var out []string
	for _, p := range parts {
		out = append(out, p)
		w := strings.Fields(p)
		for len(w) > 0 && (w[0] == "sudo" || w[0] == "time" || w[0] == "env" || w[0] == "nohup" || w[0] == "exec" || strings.Contains(w[0], "=")) {
			w = w[1:]
			out = append(out, strings.Join(w, " "))
		}
	}
	return out
}

// commands returns the simple commands of the call's command line, parsed
// once per Check.
func (c Call) commands() ([]simple, bool) {
	if c.memo == nil {
		return commands(c.str("command"), 0)
	}
	if !c.memo.parsed {
		c.memo.cmds, c.memo.cmdsOK = commands(c.str("command"), 0)
		c.memo.parsed = true
	}
	return c.memo.cmds, c.memo.cmdsOK
}

// runsClaude reports whether the call's command starts Claude Code.
func (c Call) runsClaude() bool {
	cmds, _ := c.commands()
	for _, s := range cmds {
		if len(s.words) > 0 && s.words[0] == "claude" {
			return true
		}
	}
	return false
}

// commands lexes a command line and returns every simple command it runs,
// normalised, with those of sh -c, eval, find -exec, xargs and command
// substitutions. ok is false when the text cannot be parsed (an unclosed
// quote) or nests too deep.
func commands(cmd string, depth int) ([]simple, bool) {
	if depth > maxDepth {
		return nil, false
	}
	raw, subs, ok := lex(cmd)
	if !ok {
		return nil, false
	}
	var out []simple
	for _, sub := range subs {
		inner, ok := commands(sub, depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, inner...)
	}
	for _, s := range raw {
		more, ok := expand(s, depth)
		if !ok {
			return nil, false
		}
		out = append(out, more...)
	}
	return out, true
}

// wrappers run the command that follows their options; the value is the
// options that take an argument.
var wrappers = map[string][]string{
	"sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"}, "doas": {"-u", "-C"},
	"env": {"-u", "-C", "-S"}, "nohup": nil, "exec": {"-a"}, "command": nil, "builtin": nil,
	"nice": {"-n"}, "timeout": {"-s", "-k"}, "stdbuf": {"-i", "-o", "-e"}, "ionice": {"-c", "-n", "-p"},
	"setsid": nil, "time": {"-f", "-o"}, "caffeinate": nil, "unbuffer": nil, "chronic": nil, "taskset": nil,
	"!": nil, "{": nil, "if": nil, "then": nil, "else": nil, "elif": nil, "do": nil, "while": nil, "until": nil,
}

// shells run the text after -c.
var shells = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"}

// expand normalises one simple command and adds the commands it runs.
func expand(s simple, depth int) ([]simple, bool) {
	if depth > maxDepth {
		return nil, false
	}
	// Leading assignments and wrappers.
	for len(s.words) > 0 {
		w := s.words[0]
		if i := strings.IndexByte(w, '='); i > 0 && !strings.ContainsAny(w[:i], "/-") {
			s = s.drop(1)
			continue
		}
		argOpts, ok := wrappers[progName(w)]
		if !ok || s.dyn[0] {
			break
		}
		if progName(w) == "command" && len(s.words) > 1 && (s.words[1] == "-v" || s.words[1] == "-V") {
			return nil, true // only looks the name up
		}
		s = s.drop(1)
		for len(s.words) > 0 && strings.HasPrefix(s.words[0], "-") {
			n := 1
			if slices.Contains(argOpts, s.words[0]) {
				n = 2
			}
			s = s.drop(n)
		}
		switch progName(w) {
		case "timeout":
			s = s.drop(1) // the duration
		case "env":
			for len(s.words) > 0 && strings.Contains(s.words[0], "=") {
				s = s.drop(1)
			}
		}
	}
	if len(s.words) == 0 {
		return nil, true
	}
	if s.dyn[0] {
		s.opaque = true
		return []simple{s}, true
	}
	s.words[0] = progName(s.words[0])
	prog, args := s.words[0], s.words[1:]
	switch {
	case slices.Contains(shells, prog):
		return shellC(s, depth)
	case prog == "eval":
		if slices.Contains(s.dyn[1:], true) {
			s.opaque = true
			return []simple{s}, true
		}
		return commands(strings.Join(args, " "), depth+1)
	case prog == "watch":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i], "-") {
			if args[i] == "-n" {
				i++ // the interval
			}
			i++
		}
		return commands(strings.Join(args[min(i, len(args)):], " "), depth+1)
	case prog == "xargs":
		return xargs(s, depth)
	case prog == "find":
		return find(s, depth)
	case prog == "git":
		s = gitGlobals(s)
	case prog == "rm":
		s = rmFlags(s)
	}
	return []simple{s}, true
}

// progName is the name a program runs as: \git, "git" and /usr/bin/git
// are git.
func progName(w string) string {
	w = strings.TrimPrefix(w, `\`)
	if strings.Contains(w, "/") {
		return path.Base(w)
	}
	return w
}

func (s simple) drop(n int) simple {
	n = min(n, len(s.words))
	s.words, s.dyn, s.globs = s.words[n:], s.dyn[n:], s.globs[n:]
	return s
}

// shellC judges the text a shell runs: the argument of -c, a script file
// (not followed), or stdin (unknown).
func shellC(s simple, depth int) ([]simple, bool) {
	for i := 1; i < len(s.words); i++ {
		w := s.words[i]
		if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
			return []simple{s}, true // a script file
		}
		if !strings.HasPrefix(w, "--") && strings.Contains(w, "c") {
			if i+1 >= len(s.words) || s.dyn[i+1] {
				s.opaque = true
				return []simple{s}, true
			}
			return commands(s.words[i+1], depth+1)
		}
	}
	s.opaque = true // reads its commands from stdin
	return []simple{s}, true
}

// xargsArgOpts are xargs's options that take an argument.
var xargsArgOpts = []string{"-I", "-i", "-n", "-P", "-L", "-l", "-d", "-E", "-e", "-s", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--replace"}

// xargs runs its command with more arguments from stdin.
func xargs(s simple, depth int) ([]simple, bool) {
	i := 1
	for i < len(s.words) && strings.HasPrefix(s.words[i], "-") {
		if slices.Contains(xargsArgOpts, s.words[i]) {
			i++
		}
		i++
	}
	inner := s.drop(i)
	if len(inner.words) == 0 {
		return nil, true // echo
	}
	out, ok := expand(inner, depth+1)
	for j := range out {
		out[j].partial = true
	}
	return out, ok
}

// find runs the command of -exec (and its kin) and deletes with -delete,
// which is judged as `rm -rf <its starting points>`.
func find(s simple, depth int) ([]simple, bool) {
	out := []simple{s}
	var starts []string
	i := 1
	for ; i < len(s.words) && !strings.HasPrefix(s.words[i], "-") && s.words[i] != "(" && s.words[i] != "!"; i++ {
		starts = append(starts, s.words[i])
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	for ; i < len(s.words); i++ {
		switch s.words[i] {
		case "-delete":
			words := append([]string{"rm", "-fr"}, starts...)
			out = append(out, simple{words: words, dyn: make([]bool, len(words)), globs: make([]bool, len(words)), writes: starts})
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(s.words) && s.words[j] != ";" && s.words[j] != "+" {
				j++
			}
			inner := s
			inner.words, inner.dyn, inner.globs = s.words[i+1:j], s.dyn[i+1:j], s.globs[i+1:j]
			inner.reads, inner.writes = nil, nil
			more, ok := expand(inner, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, more...)
			i = j
		}
	}
	return out, true
}

// gitArgOpts are git's global options that take an argument.
var gitArgOpts = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix", "--list-cmds"}

// gitGlobals drops git's global options: `git -C . -c k=v push` is a push.
func gitGlobals(s simple) simple {
	i := 1
	for i < len(s.words) && strings.HasPrefix(s.words[i], "-") {
		if slices.Contains(gitArgOpts, s.words[i]) {
			i++
		}
		i++
	}
	i = min(i, len(s.words))
	s.words = append([]string{"git"}, s.words[i:]...)
	s.dyn = append([]bool{false}, s.dyn[i:]...)
	s.globs = append([]bool{false}, s.globs[i:]...)
	return s
}

// rmLong are rm's long options, as the short flag they stand for.
var rmLong = map[string]byte{"--recursive": 'r', "--force": 'f', "--dir": 'd', "--verbose": 'v'}

// rmFlags gathers rm's flags, wherever written, into one sorted cluster
// after the program: rm -r -f x, rm -Rf x and rm x --force -r are all
// rm -fr x.
func rmFlags(s simple) simple {
	out := simple{words: []string{"rm"}, dyn: []bool{false}, globs: []bool{false}, reads: s.reads, writes: s.writes, opaque: s.opaque, partial: s.partial}
	var flags []byte
	ended := false
	for i, w := range s.words[1:] {
		switch {
		case ended || w == "-" || !strings.HasPrefix(w, "-"):
			out.words, out.dyn, out.globs = append(out.words, w), append(out.dyn, s.dyn[i+1]), append(out.globs, s.globs[i+1])
		case w == "--":
			ended = true
		case strings.HasPrefix(w, "--"):
			if f, ok := rmLong[w]; ok {
				flags = append(flags, f)
			}
		default:
			flags = append(flags, strings.ReplaceAll(w[1:], "R", "r")...)
		}
	}
	if len(flags) > 0 {
		slices.Sort(flags)
		flags = slices.Compact(flags)
		out.words = slices.Insert(out.words, 1, "-"+string(flags))
		out.dyn = slices.Insert(out.dyn, 1, false)
		out.globs = slices.Insert(out.globs, 1, false)
	}
	return out
}

// canonical normalises a specifier's words as commands are.
func canonical(words []string) []string {
	if len(words) == 0 {
		return words
	}
	s := simple{words: slices.Clone(words), dyn: make([]bool, len(words)), globs: make([]bool, len(words))}
	switch progName(words[0]) {
	case "git":
		s = gitGlobals(s)
	case "rm":
		s = rmFlags(s)
	}
	return s.words
}

// fitFlags lets a specifier's rm flags match a command that has at least
// those: `rm -rf *` holds for rm -rfv.
func fitFlags(spec, words []string) []string {
	if len(spec) < 2 || len(words) < 2 || spec[0] != "rm" || words[0] != "rm" || !isCluster(spec[1]) || !isCluster(words[1]) {
		return words
	}
	for _, f := range spec[1][1:] {
		if !strings.ContainsRune(words[1][1:], f) {
			return words
		}
	}
	return append([]string{"rm", spec[1]}, words[2:]...)
}

func isCluster(w string) bool { return len(w) > 1 && w[0] == '-' && w[1] != '-' }

// writers are programs whose path arguments may be written to.
var writers = []string{"tee", "cp", "mv", "install", "rm", "touch", "truncate", "ln", "mkdir", "rmdir", "chmod", "chown", "dd", "patch", "rsync", "unzip", "tar", "curl", "wget"}

// judgeShellPaths applies a Read or Edit rule to the files a command
// names: a Read rule to every argument and input redirection, an Edit rule
// to output redirections and the arguments of programs that write.
func (r Rule) judgeShellPaths(c Call) outcome {
	cmds, ok := c.commands()
	if !ok {
		return unsure
	}
	for _, s := range cmds {
		var cands []string
		var globbed []bool
		add := func(ws []string, gs []bool) {
			cands, globbed = append(cands, ws...), append(globbed, gs...)
		}
		add(s.writes, make([]bool, len(s.writes)))
		inPlace := len(s.words) > 0 && (s.words[0] == "sed" || s.words[0] == "perl") && slices.ContainsFunc(s.words, func(w string) bool { return strings.HasPrefix(w, "-i") })
		if r.Tool == "Read" {
			add(s.reads, make([]bool, len(s.reads)))
		}
		if len(s.words) > 1 && (r.Tool == "Read" || slices.Contains(writers, s.words[0]) || inPlace) {
			for i, w := range s.words[1:] {
				if s.dyn[i+1] && !strings.HasPrefix(w, "~") {
					continue
				}
				if j := strings.IndexByte(w, '='); strings.HasPrefix(w, "-") && j > 0 {
					w = w[j+1:] // --file=x, of=x
				} else if strings.HasPrefix(w, "-") {
					continue
				} else if j > 0 && s.words[0] == "dd" {
					w = w[j+1:]
				}
				cands, globbed = append(cands, w), append(globbed, s.globs[i+1])
			}
		}
		for i, p := range cands {
			if strings.HasPrefix(p, "~/") && c.Home != "" {
				p = filepath.Join(c.Home, p[2:])
			}
			if globbed[i] {
				if ok, _ := path.Match(path.Base(p), path.Base(strings.TrimSuffix(r.Spec, "/**"))); ok && c.mayHold(r.Spec, path.Dir(p)) {
					return yes
				}
				continue
			}
			if c.matchPath(r.Spec, p) {
				return yes
			}
		}
	}
	return no
}
