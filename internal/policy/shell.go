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

// wrapper is what the matcher knows of a program that runs the command
// after its options: the short options (letters) and the long ones that
// take an argument. Long options may be abbreviated to any unambiguous
// prefix (getopt_long), and written --opt=value.
type wrapper struct {
	short string
	long  []string
	// positional is how many operands come before the command (timeout's
	// duration, taskset's mask).
	positional int
}

// wrappers run the command that follows their options.
var wrappers = map[string]wrapper{
	"sudo": {short: "ughpCDrtURT", long: []string{"user", "group", "host", "prompt", "close-from", "chdir", "role", "type", "other-user", "chroot", "command-timeout"}},
	"doas": {short: "uC"}, "exec": {short: "a"}, "nohup": {}, "command": {}, "builtin": {},
	"env":     {short: "uCS", long: []string{"unset", "chdir", "split-string"}},
	"nice":    {short: "n", long: []string{"adjustment"}},
	"timeout": {short: "sk", long: []string{"signal", "kill-after"}, positional: 1},
	"stdbuf":  {short: "ioe", long: []string{"input", "output", "error"}},
	"ionice":  {short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}},
	"time":    {short: "fo", long: []string{"format", "output"}},
	"taskset": {positional: 1}, "setsid": {}, "caffeinate": {}, "unbuffer": {}, "chronic": {},
	"!": {}, "{": {}, "if": {}, "then": {}, "else": {}, "elif": {}, "do": {}, "while": {}, "until": {},
}

// option reads the option word w (which starts with -) of the wrapper:
// the option's name (one letter, or the long name as written, without
// --), its argument, and how many words the two take.
func (wr wrapper) option(w, next string) (name, arg string, n int) {
	if long, ok := strings.CutPrefix(w, "--"); ok {
		if name, arg, ok := strings.Cut(long, "="); ok {
			return name, arg, 1
		}
		for _, l := range wr.long {
			if long != "" && strings.HasPrefix(l, long) {
				return long, next, 2
			}
		}
		return long, "", 1
	}
	for i := 1; i < len(w); i++ {
		if strings.IndexByte(wr.short, w[i]) < 0 {
			continue
		}
		if i+1 < len(w) {
			return w[i : i+1], w[i+1:], 1 // -uroot, -S'git push'
		}
		return w[i : i+1], next, 2
	}
	return "", "", 1
}

// splitString reports whether an option of env is -S (--split-string, or
// any prefix of it: env has no short option s, so "s" is --s): its
// argument is split into more arguments, options and the command.
func splitString(name string) bool {
	return name == "S" || (name != "" && strings.HasPrefix("split-string", name))
}

// splitWords splits env's -S string as env does: into words, quotes
// removed. A string that expands or holds operators is not judged.
func splitWords(arg string, dyn bool) (simple, bool) {
	if dyn {
		return simple{}, false
	}
	cmds, subs, ok := lex(arg)
	if !ok || len(subs) > 0 || len(cmds) > 1 {
		return simple{}, false
	}
	if len(cmds) == 0 {
		return simple{}, true
	}
	return cmds[0], !slices.Contains(cmds[0].dyn, true)
}

// shells run the text after -c.
var shells = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"}

// expand normalises one simple command and adds the commands it runs.
func expand(s simple, depth int) ([]simple, bool) {
	if depth > maxDepth {
		return nil, false
	}
	// Leading assignments and wrappers. An assignment of git's config
	// (GIT_CONFIG_KEY_0=alias.p) may define what git runs.
	gitEnv := false
	for len(s.words) > 0 {
		w := s.words[0]
		if i := strings.IndexByte(w, '='); i > 0 && !strings.ContainsAny(w[:i], "/-") {
			gitEnv = gitEnv || strings.HasPrefix(w, "GIT_CONFIG")
			s = s.drop(1)
			continue
		}
		name := progName(w)
		wr, ok := wrappers[name]
		if !ok || s.dyn[0] {
			break
		}
		if name == "command" && len(s.words) > 1 && (s.words[1] == "-v" || s.words[1] == "-V") {
			return nil, true // only looks the name up
		}
		s = s.drop(1)
		for len(s.words) > 0 && strings.HasPrefix(s.words[0], "-") {
			if s.words[0] == "--" {
				s = s.drop(1)
				break
			}
			next := ""
			if len(s.words) > 1 {
				next = s.words[1]
			}
			opt, arg, n := wr.option(s.words[0], next)
			if name != "env" || !splitString(opt) {
				s = s.drop(n)
				continue
			}
			split, ok := splitWords(arg, s.dyn[min(n, len(s.dyn))-1])
			if !ok {
				s.opaque = true
				return []simple{s}, true
			}
			rest := s.drop(n)
			split.words, split.dyn, split.globs = append(split.words, rest.words...), append(split.dyn, rest.dyn...), append(split.globs, rest.globs...)
			s.words, s.dyn, s.globs = split.words, split.dyn, split.globs
		}
		s = s.drop(wr.positional)
		if name == "env" {
			for len(s.words) > 0 && strings.Contains(s.words[0], "=") {
				gitEnv = gitEnv || strings.HasPrefix(s.words[0], "GIT_CONFIG")
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
		if gitEnv || gitAliased(s) {
			s.opaque = true // runs what an alias says, which is not shown
			return []simple{s}, true
		}
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

// gitAliased reports whether git's command line defines configuration
// that may run another command: an alias (alias.p=push, alias.p=!sh …),
// or any value starting with ! (a shell command).
func gitAliased(s simple) bool {
	for i := 1; i < len(s.words) && strings.HasPrefix(s.words[i], "-"); i++ {
		w, v := s.words[i], ""
		switch {
		case w == "-c" || w == "--config-env":
			if i+1 < len(s.words) {
				v = s.words[i+1]
			}
			i++
		case strings.HasPrefix(w, "--config-env="):
			v = strings.TrimPrefix(w, "--config-env=")
		default:
			if slices.Contains(gitArgOpts, w) {
				i++
			}
			continue
		}
		key, val, _ := strings.Cut(v, "=")
		if strings.HasPrefix(strings.ToLower(key), "alias.") || strings.HasPrefix(val, "!") || (i < len(s.words) && s.dyn[i]) {
			return true
		}
	}
	return false
}

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

// rmLong are rm's long options, as the short flag they stand for (0 for
// those that change nothing a rule looks at).
var rmLong = map[string]byte{"recursive": 'r', "force": 'f', "dir": 'd', "verbose": 'v', "interactive": 0, "one-file-system": 0, "no-preserve-root": 0, "preserve-root": 0, "help": 0, "version": 0}

// rmLongFlag is the flag a long option of rm stands for, abbreviated to
// any unambiguous prefix as GNU rm accepts (--recur, --f).
func rmLongFlag(w string) (byte, bool) {
	name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
	if f, ok := rmLong[name]; ok {
		return f, f != 0
	}
	var flag byte
	found := 0
	for l, f := range rmLong {
		if name != "" && strings.HasPrefix(l, name) {
			flag, found = f, found+1
		}
	}
	return flag, found == 1 && flag != 0
}

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
			if f, ok := rmLongFlag(w); ok {
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
