package chat

import "strings"

// Code fences as CommonMark reads them: a run of three or more backticks or
// tildes, indented by at most three spaces, opens a block (a backtick
// fence's info string holds no backtick); only a run of the same character,
// at least as long, with nothing after it, closes it. So a ````md block can
// hold ``` lines, and ~~~ blocks are blocks too.

// fenceRun returns the fence run a line opens with ("```", "~~~~") and
// what follows it, or "" when the line is no fence.
func fenceRun(line string) (run, info string) {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return "", ""
	}
	t := line[indent:]
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return "", ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 {
		return "", ""
	}
	run, info = t[:n], strings.TrimSpace(t[n:])
	if run[0] == '`' && strings.Contains(info, "`") {
		return "", ""
	}
	return run, info
}

// nextFence returns the fence run open after line, given the run open
// before it ("" = none).
func nextFence(open, line string) string {
	run, info := fenceRun(line)
	switch {
	case run == "":
		return open
	case open == "":
		return run
	case run[0] == open[0] && len(run) >= len(open) && info == "":
		return ""
	}
	return open
}
