// Package tmux drives ccbridge's own tmux server through the execx seam:
// sessions and windows created with a working directory and per-pane
// environment, panes addressed by %id only, text delivered as a bracketed
// paste that can never be read as key names, keys from a fixed set, screen
// capture and one-call liveness. It imports only execx.
package tmux

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// Typed errors, mapped from tmux's stderr so callers never match strings.
var (
	ErrNoServer  = errors.New("tmux server not running")
	ErrPaneGone  = errors.New("tmux pane gone")
	ErrNoSession = errors.New("tmux session not found")
)

// commandTimeout bounds one tmux command when the caller set no deadline.
const commandTimeout = 5 * time.Second

// KeepEnv lists the daemon's environment variables that reach the tmux
// server (and so every pane). Everything else, bot tokens included, is
// dropped: the server inherits the environment of the client that starts it.
// TMUX_TMPDIR says where `tmux -L` keeps its socket: without it ccbridge's
// server is not where the user's `tmux -L ccbridge attach` looks.
var KeepEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TERM", "COLORTERM", "TZ", "TMPDIR", "TMUX_TMPDIR",
	"XDG_*", "ANTHROPIC_*", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
}

// Options selects the server.
type Options struct {
	Socket     string   // tmux -L <name>; the daemon's dedicated server
	SocketPath string   // tmux -S <path>; tests use a private socket file
	Env        []string // environment for tmux commands; nil = KeepEnv of os.Environ()
}

// Server is a handle on one tmux server.
type Server struct {
	run  execx.Runner
	sock []string
	env  []string
}

// New returns a handle; it starts nothing.
func New(run execx.Runner, opt Options) *Server {
	s := &Server{run: run, env: opt.Env}
	switch {
	case opt.SocketPath != "":
		s.sock = []string{"-S", opt.SocketPath}
	default:
		name := opt.Socket
		if name == "" {
			name = "ccbridge"
		}
		s.sock = []string{"-L", name}
	}
	if s.env == nil {
		s.env = execx.ChildEnv(os.Environ(), KeepEnv)
	}
	return s
}

// SocketArgs returns the arguments that select this server, for messages
// such as "attach with tmux -L ccbridge attach".
func (s *Server) SocketArgs() []string { return append([]string(nil), s.sock...) }

func (s *Server) exec(ctx context.Context, stdin string, args ...string) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, commandTimeout)
		defer cancel()
	}
	cmd := execx.Cmd{Args: append(append([]string{"tmux"}, s.sock...), args...), Env: s.env}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := s.run.Run(ctx, cmd)
	if err != nil {
		return string(out), classify(err)
	}
	return string(out), nil
}

// classify maps tmux's stderr to the typed errors, keeping the original.
func classify(err error) error {
	var ce *execx.CmdError
	if !errors.As(err, &ce) {
		return err
	}
	msg := ce.Stderr
	switch {
	case strings.Contains(msg, "no server running"), strings.Contains(msg, "error connecting to"):
		return fmt.Errorf("%w: %w", ErrNoServer, err)
	case strings.Contains(msg, "can't find pane"), strings.Contains(msg, "can't find window"):
		return fmt.Errorf("%w: %w", ErrPaneGone, err)
	case strings.Contains(msg, "can't find session"), strings.Contains(msg, "no current target"):
		// "no current target": a server that has no session left.
		return fmt.Errorf("%w: %w", ErrNoSession, err)
	}
	return err
}

// TagOption is the pane option that holds a ccbridge pane's session key. It
// is set in the same tmux invocation that creates the pane, so no pane of
// ours ever exists untagged, and a restarted daemon finds its panes by tag.
const TagOption = "@ccbridge_session"

// PaneSpec describes a pane to create.
type PaneSpec struct {
	Session string            // tmux session; created if missing
	Window  string            // window name, for people who attach
	Tag     string            // value of TagOption on the new pane; "" = none
	Dir     string            // working directory
	Env     map[string]string // per-pane environment, on top of the server's
	Argv    []string          // the program and its arguments
	Width   int               // size of a new session; 0 = tmux's default
	Height  int
	// KeepOnExit keeps the pane, dead, when its program exits, so what it
	// printed before an early exit can be read (Capture with history: the
	// program's last words may have scrolled up); LetGoOnExit ends that.
	KeepOnExit bool
}

// DeadNotice starts the line tmux writes into a pane kept on exit when
// its program dies ("Pane is dead (status 1, …)", tmux 3.2 to 3.4).
const DeadNotice = "Pane is dead"

var windowSeq atomic.Uint64

// NewPane starts spec.Argv in a new window of spec.Session (each pane gets a
// whole window: split panes in a detached 80×24 window run out of room after
// four) and returns the pane's %id.
//
// One tmux invocation creates the window under a unique temporary name,
// tags its pane, gives the window its real name and turns focus-events on
// (without it Claude prints a hint about it): tmux runs a command list
// without serving other clients in between, so nobody ever sees the pane
// untagged. Names and the directory are format-escaped (tmux expands
// formats, #(shell) included, in -s, -n, -c and rename-window).
//
// spec.Env belongs to this pane alone. new-window -e gives it to the pane
// only, but new-session -e also stores it in the session's environment,
// which every later window inherits: a window a person opens there would
// carry the session key (and the global hooks would take its Claude for
// ours) and the API keys, and a key removed from the config would linger.
// So the command list unsets them again, before any other client is
// served (in new-window's too: it cleans a session made by an older
// ccbridge that left them there).
func (s *Server) NewPane(ctx context.Context, spec PaneSpec) (string, error) {
	if len(spec.Argv) == 0 {
		return "", errors.New("new pane: empty command")
	}
	if err := checkSessionName(spec.Session); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("ccbridge-new-%d-%d", os.Getpid(), windowSeq.Add(1))
	common := []string{"-d", "-P", "-F", "#{pane_id}", "-n", tmp, "-c", EscapeFormat(spec.Dir)}
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		common = append(common, "-e", listArg(k+"="+spec.Env[k]))
	}
	tail := []string{"--"}
	for _, a := range spec.Argv {
		tail = append(tail, listArg(a))
	}
	win := "=" + spec.Session + ":=" + tmp
	if spec.Tag != "" {
		tail = append(tail, ";", "set-option", "-p", "-t", win, TagOption, listArg(spec.Tag))
	}
	if spec.KeepOnExit {
		// In the same command list: the program cannot be seen to exit
		// before it is set.
		tail = append(tail, ";", "set-option", "-p", "-t", win, "remain-on-exit", "on")
	}
	name := spec.Window
	if name == "" {
		name = spec.Session
	}
	tail = append(tail, ";", "rename-window", "-t", win, listArg(EscapeFormat(name)), ";", "set-option", "-s", "focus-events", "on")
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		tail = append(tail, ";", "set-environment", "-t", "="+spec.Session, "-u", listArg(k))
	}

	args := append([]string{"new-window", "-t", "=" + spec.Session + ":"}, common...)
	out, err := s.exec(ctx, "", append(args, tail...)...)
	if errors.Is(err, ErrNoServer) || errors.Is(err, ErrNoSession) {
		args = []string{"new-session", "-s", EscapeFormat(spec.Session)}
		if spec.Width > 0 && spec.Height > 0 {
			args = append(args, "-x", strconv.Itoa(spec.Width), "-y", strconv.Itoa(spec.Height))
		}
		out, err = s.exec(ctx, "", append(append(args, common...), tail...)...)
		if err != nil && strings.Contains(err.Error(), "duplicate session") {
			// Another caller created the session between our two commands.
			args = append([]string{"new-window", "-t", "=" + spec.Session + ":"}, common...)
			out, err = s.exec(ctx, "", append(args, tail...)...)
		}
	}
	if err != nil {
		return "", fmt.Errorf("new pane in %s: %w", spec.Session, err)
	}
	id := strings.TrimSpace(out)
	if !validPaneID(id) {
		return "", fmt.Errorf("new pane in %s: unexpected pane id %q", spec.Session, id)
	}
	return id, nil
}

// EscapeFormat makes s stand for itself where tmux expands formats: "#"
// starts a format (#{…}, #(shell command)), "##" is a literal "#".
func EscapeFormat(s string) string { return strings.ReplaceAll(s, "#", "##") }

// listArg protects one argument of a command list given on the command
// line: tmux ends a command at any argument that ends in ";", unless the
// ";" is preceded by a backslash (which tmux then removes).
func listArg(a string) string {
	if strings.HasSuffix(a, ";") {
		return a[:len(a)-1] + `\;`
	}
	return a
}

func validPaneID(id string) bool {
	if len(id) < 2 || id[0] != '%' {
		return false
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func checkSessionName(name string) error {
	if name == "" || strings.ContainsAny(name, ".:") {
		return fmt.Errorf("tmux session name %q must be non-empty without '.' or ':'", name)
	}
	return nil
}

var bufferSeq atomic.Uint64

// Key is a key that SendKeys may press. Only these names reach send-keys,
// so no text from Discord can ever be read as a key name.
type Key string

// Keys ccbridge presses.
const (
	KeyEnter     Key = "Enter"
	KeyEscape    Key = "Escape"
	KeyUp        Key = "Up"
	KeyDown      Key = "Down"
	KeyLeft      Key = "Left"
	KeyRight     Key = "Right"
	KeyTab       Key = "Tab"
	KeyShiftTab  Key = "BTab"
	KeyClearLine Key = "C-u"
	KeyInterrupt Key = "C-c"
)

func validKey(k Key) bool {
	switch k {
	case KeyEnter, KeyEscape, KeyUp, KeyDown, KeyLeft, KeyRight, KeyTab, KeyShiftTab, KeyClearLine, KeyInterrupt:
		return true
	}
	return len(k) == 1 && k[0] >= '0' && k[0] <= '9'
}

// SendKeys presses keys in the pane, in order, in one command.
func (s *Server) SendKeys(ctx context.Context, pane string, keys ...Key) error {
	args := []string{"send-keys", "-t", pane}
	for _, k := range keys {
		if !validKey(k) {
			return fmt.Errorf("send keys to %s: %q is not an allowed key", pane, k)
		}
		args = append(args, string(k))
	}
	if _, err := s.exec(ctx, "", args...); err != nil {
		return fmt.Errorf("send keys to %s: %w", pane, err)
	}
	return nil
}

// Guard is a condition on a pane's visible screen that the tmux server
// itself checks immediately before it acts: tmux evaluates the condition
// and runs the action in one pass of its command queue, without reading
// the pane's output in between, so the check and the key see the same
// screen. (What tmux cannot see is a program that has decided to draw a
// dialog but whose output has not reached tmux yet: that window, the time
// between the program's state change and its redraw, remains.)
type Guard struct {
	Without []string // act only if none of these is on the visible screen
	With    []string // and only if all of these are
	// Lines must each be a whole visible line, its indent and a leading
	// highlight mark "› " aside: "$ git push" does not hold on the line
	// "$ git push --force".
	Lines []string
	// ServerPID and PanePID, when set, must be the tmux server's pid and
	// the pane's process id: a pane id alone may name another program's
	// pane after the server restarted.
	ServerPID, PanePID int
}

// ErrRefused says a guarded action was not taken: the screen did not
// satisfy its guard.
var ErrRefused = errors.New("the screen did not allow it")

// format builds the tmux condition: #{C:…} searches the visible lines
// (fnmatch, so ?, * and [ are escaped), #{?…,0,1} negates (tmux 3.3 has
// no #{!:…}), #{&&:…} joins.
func (g Guard) format() string {
	var terms []string
	// tmux cuts trailing spaces off each line before it searches, so a
	// marker's own trailing spaces would never match.
	for _, w := range g.With {
		terms = append(terms, "#{C:"+searchEscape(strings.TrimRight(w, " "))+"}")
	}
	for _, l := range g.Lines {
		terms = append(terms, "#{C/r:^[[:space:]]*(› )?"+formatEscape(regexEscape(strings.TrimSpace(l)))+"$}")
	}
	for _, w := range g.Without {
		terms = append(terms, "#{?#{C:"+searchEscape(strings.TrimRight(w, " "))+"},0,1}")
	}
	if g.ServerPID != 0 {
		terms = append(terms, "#{==:#{pid},"+strconv.Itoa(g.ServerPID)+"}")
	}
	if g.PanePID != 0 {
		terms = append(terms, "#{==:#{pane_pid},"+strconv.Itoa(g.PanePID)+"}")
	}
	if len(terms) == 0 {
		return "1"
	}
	cond := terms[len(terms)-1]
	for i := len(terms) - 2; i >= 0; i-- {
		cond = "#{&&:" + terms[i] + "," + cond + "}"
	}
	return cond
}

// regexEscape quotes s for a POSIX extended regular expression.
func regexEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.[]()*+?{}|^$`, r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// formatEscape quotes s in a tmux format.
func formatEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '#' || r == ',' || r == '}' {
			b.WriteRune('#')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func searchEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '*', '?', '[':
			b.WriteRune('\\')
			b.WriteRune(r)
		case '#', ',', '}':
			b.WriteRune('#')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const (
	guardSent    = "ccbridge:sent"
	guardRefused = "ccbridge:refused"
)

// guarded runs action (a tmux command string built only from pane ids,
// buffer names and allowed keys) in pane if the guard holds.
func (s *Server) guarded(ctx context.Context, pane string, g Guard, action string) error {
	if !validPaneID(pane) {
		return fmt.Errorf("%q is not a pane id", pane)
	}
	out, err := s.exec(ctx, "", "if-shell", "-F", "-t", pane, g.format(),
		action+" ; display-message -p "+guardSent, "display-message -p "+guardRefused)
	switch {
	case err != nil:
		return err
	case strings.Contains(out, guardSent):
		return nil
	case strings.Contains(out, guardRefused):
		return ErrRefused
	}
	return fmt.Errorf("guarded command in %s: unexpected output %q", pane, out)
}

// SendKeysIf presses keys in the pane only if the guard holds at that
// moment (see Guard); otherwise it returns ErrRefused and presses nothing.
func (s *Server) SendKeysIf(ctx context.Context, pane string, g Guard, keys ...Key) error {
	action := "send-keys -t " + pane
	for _, k := range keys {
		if !validKey(k) {
			return fmt.Errorf("send keys to %s: %q is not an allowed key", pane, k)
		}
		action += " " + string(k)
	}
	if err := s.guarded(ctx, pane, g, action); err != nil {
		return fmt.Errorf("send keys to %s: %w", pane, err)
	}
	return nil
}

// PasteTextIf delivers text into the pane as one bracketed paste, only if
// the guard holds when tmux pastes (see Guard; the zero Guard always
// holds); otherwise it returns ErrRefused and pastes nothing. The body goes
// through stdin (no argv limit, no quoting, never parsed as key names), -p
// wraps it in paste markers so newlines are inserted rather than
// submitted, -r keeps LF as LF, and -d deletes the buffer. The text is
// sanitized first (see Sanitize). It does not press Enter. Once the paste
// has run the outcome is indeterminate, so callers must not retry it.
func (s *Server) PasteTextIf(ctx context.Context, pane string, g Guard, text string) error {
	text = Sanitize(text)
	if text == "" {
		return nil
	}
	// Buffers are per server, so names must be unique across processes.
	buf := fmt.Sprintf("ccbridge-%d-%d", os.Getpid(), bufferSeq.Add(1))
	if _, err := s.exec(ctx, text, "load-buffer", "-b", buf, "-"); err != nil {
		return fmt.Errorf("paste to %s: %w", pane, err)
	}
	if err := s.guarded(ctx, pane, g, "paste-buffer -p -r -d -b "+buf+" -t "+pane); err != nil {
		_, _ = s.exec(ctx, "", "delete-buffer", "-b", buf)
		return fmt.Errorf("paste to %s: %w", pane, err)
	}
	return nil
}

// Capture returns the pane's visible screen plus up to history lines above
// it, as plain text (no escape sequences, wrapped lines joined).
func (s *Server) Capture(ctx context.Context, pane string, history int) (string, error) {
	out, err := s.exec(ctx, "", "capture-pane", "-p", "-J", "-t", pane, "-S", strconv.Itoa(-history))
	if err != nil {
		return "", fmt.Errorf("capture %s: %w", pane, err)
	}
	return out, nil
}

// Pane is one line of ListPanes.
type Pane struct {
	ID      string
	Dead    bool
	PID     int // the pane's process
	Command string
	Session string
	Window  string
	Tag     string // TagOption; "" on panes ccbridge did not tag
	// ServerPID is the tmux server's pid: with PID, what tells this pane
	// from one with the same id after the server restarted.
	ServerPID int
	Path      string
}

const paneFormat = "#{pane_id}\t#{pane_dead}\t#{pane_pid}\t#{pane_current_command}\t#{session_name}\t#{window_name}\t#{" + TagOption + "}\t#{pid}\t#{pane_current_path}"

// ListPanes lists every pane of the server in one call; it is how liveness
// is checked. With no server running it returns ErrNoServer.
func (s *Server) ListPanes(ctx context.Context) ([]Pane, error) {
	out, err := s.exec(ctx, "", "list-panes", "-a", "-F", paneFormat)
	if errors.Is(err, ErrNoSession) {
		// A server with no session (yet: another client is creating the
		// first one; or no more) has no panes.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list panes: %w", err)
	}
	return parsePanes(out)
}

func parsePanes(out string) ([]Pane, error) {
	var panes []Pane
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 9)
		if len(f) != 9 {
			return nil, fmt.Errorf("list panes: unexpected line %q", line)
		}
		pid, _ := strconv.Atoi(f[2])
		server, _ := strconv.Atoi(f[7])
		panes = append(panes, Pane{ID: f[0], Dead: f[1] == "1", PID: pid, Command: f[3], Session: f[4], Window: f[5], Tag: f[6], ServerPID: server, Path: f[8]})
	}
	return panes, nil
}

// LetGoOnExit undoes PaneSpec.KeepOnExit: the pane closes when its program
// exits (unless the user's own tmux configuration keeps panes).
func (s *Server) LetGoOnExit(ctx context.Context, pane string) error {
	if _, err := s.exec(ctx, "", "set-option", "-p", "-u", "-t", pane, "remain-on-exit"); err != nil {
		return fmt.Errorf("let go of %s: %w", pane, err)
	}
	return nil
}

// KillPane kills a pane; a pane already gone is not an error.
func (s *Server) KillPane(ctx context.Context, pane string) error {
	_, err := s.exec(ctx, "", "kill-pane", "-t", pane)
	if err != nil && !errors.Is(err, ErrPaneGone) && !errors.Is(err, ErrNoServer) {
		return fmt.Errorf("kill pane %s: %w", pane, err)
	}
	return nil
}

// KillServer stops the server; used by tests and never by the daemon, which
// leaves sessions running across its own restarts.
func (s *Server) KillServer(ctx context.Context) error {
	_, err := s.exec(ctx, "", "kill-server")
	if err != nil && !errors.Is(err, ErrNoServer) {
		return fmt.Errorf("kill server: %w", err)
	}
	return nil
}
