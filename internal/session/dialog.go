package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// A Dialog is a choice Claude Code shows in its terminal that no hook
// reports: the folder trust question and the auto-mode nudge at start
// (claude-code-protocol.md §12), or any other a release adds. ccbridge
// shows it to the person with its choices and never answers it itself:
// trust and settings are theirs.
type Dialog struct {
	// Hash stands for the dialog's text and choices, not for which choice
	// is highlighted: an answer is pressed only while this dialog is open.
	Hash    string
	Text    string   // what the dialog says, above its choices
	Choices []string // as shown, top to bottom
	// Selected is the highlighted choice (Enter picks it).
	Selected int
}

// ErrDialogChanged says the dialog an answer was meant for is no longer
// the one on the screen; nothing was pressed.
var ErrDialogChanged = errors.New("the dialog on Claude's screen is not the one answered")

// ParseDialog finds a dialog on a screen that has no input box: a column
// of choices, one highlighted with ❯, and the text above them up to the
// rule or ▔ line that opens the dialog (or the top). Claude's own
// permission prompts are dialogs too, but they come with hook cards (see
// hookDialog); this is for the ones that do not.
func ParseDialog(screen string) (Dialog, bool) { return parseDialog(screen, claudeScreen{}) }

// parseDialog is ParseDialog for the agent whose screen scr reads.
func parseDialog(screen string, scr agent.Screen) (Dialog, bool) {
	if scr.InputBoxShown(screen) {
		return Dialog{}, false
	}
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	sel := -1
	col := 0
	for i := len(lines) - 1; i >= 0; i-- {
		trimmed := strings.TrimLeft(lines[i], " ")
		if strings.HasPrefix(trimmed, scr.DialogMark()+" ") {
			sel = i
			col = utf8.RuneCountInString(lines[i]) - utf8.RuneCountInString(trimmed) + 2
			break
		}
	}
	if sel < 0 {
		return Dialog{}, false
	}
	// A choice's text starts at col: the highlighted one after "❯ ", the
	// others after blanks. When the highlighted one is numbered, so are
	// the others: Codex indents its dialog's text and hints as its choices.
	selText := []rune(strings.TrimRight(lines[sel], " "))
	numbered := len(selText) > col && numberedChoice.MatchString(string(selText[col:]))
	choice := func(i int) (string, bool) {
		r := []rune(strings.TrimRight(lines[i], " "))
		if len(r) <= col || r[col] == ' ' {
			return "", false
		}
		if i != sel && strings.TrimSpace(string(r[:col])) != "" {
			return "", false
		}
		if numbered && !numberedChoice.MatchString(string(r[col:])) {
			return "", false
		}
		return string(r[col:]), true
	}
	first, last := sel, sel
	for first > 0 {
		if _, ok := choice(first - 1); !ok {
			break
		}
		first--
	}
	for last+1 < len(lines) {
		if _, ok := choice(last + 1); !ok {
			break
		}
		last++
	}
	d := Dialog{Selected: sel - first}
	for i := first; i <= last; i++ {
		c, _ := choice(i)
		d.Choices = append(d.Choices, c)
	}
	if len(d.Choices) < 2 {
		return Dialog{}, false
	}
	var text []string
	for i := first - 1; i >= 0 && !scr.DialogTop(lines[i]); i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			text = append([]string{l}, text...)
		}
	}
	// The hint under the choices is shown but not hashed: it changes as
	// the highlight moves ("Not answered yet" goes).
	sum := sha256.Sum256([]byte(strings.Join(text, "\n") + "\x00" + strings.Join(d.Choices, "\x00")))
	for i := last + 1; i < len(lines); i++ {
		if l := strings.TrimSpace(lines[i]); l != "" && !isRule(lines[i]) {
			text = append(text, l)
		}
	}
	d.Text = strings.Join(text, "\n")
	d.Hash = hex.EncodeToString(sum[:8])
	return d, true
}

// numberedChoice is a choice as "1. Trust and continue".
var numberedChoice = regexp.MustCompile(`^\d+\. `)

// dialogSettle is how long a dialog's screen must stay unchanged before it
// is shown: Claude draws its start screen in a few steps.
const dialogSettle = 400 * time.Millisecond

// Dialog returns the dialog the session's pane shows that no hook reports,
// if any.
func (m *Manager) Dialog(ctx context.Context, key string) (Dialog, bool, error) {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return Dialog{}, false, err
	}
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return Dialog{}, false, err
	}
	scr, err := m.agentOf(key)
	if err != nil {
		return Dialog{}, false, err
	}
	d, ok := parseDialog(screen, scr)
	if ok && hookDialog(d) {
		return Dialog{}, false, nil
	}
	return d, ok, nil
}

// AnswerDialog picks a choice of the dialog hash names, as the person
// asked: the highlight is moved to it with ↑/↓ and Enter pressed, each key
// only while that dialog is on the screen (checked by tmux as it sends),
// and Enter only once the screen shows the choice highlighted.
func (m *Manager) AnswerDialog(ctx context.Context, key, hash string, choice int) error {
	pane, unlock, err := m.lockedPane(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	scr, err := m.agentOf(key)
	if err != nil {
		return err
	}
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return err
	}
	d, ok := parseDialog(screen, scr)
	if !ok || d.Hash != hash || hookDialog(d) {
		return ErrDialogChanged
	}
	if choice < 0 || choice >= len(d.Choices) {
		return fmt.Errorf("no choice %d in a dialog of %d", choice+1, len(d.Choices))
	}
	guard := tmux.Guard{With: []string{firstLine(d.Text), d.Choices[choice]}}
	for d.Selected != choice {
		k := tmux.KeyDown
		if choice < d.Selected {
			k = tmux.KeyUp
		}
		if err := m.opt.Panes.SendKeysIf(ctx, pane, guard, k); err != nil {
			return dialogRefused(err)
		}
		want := d.Selected + 1
		if k == tmux.KeyUp {
			want = d.Selected - 1
		}
		screen, err := m.waitScreen(ctx, pane, keyRedraw, func(s string) bool {
			n, ok := parseDialog(s, scr)
			return !ok || n.Hash != hash || n.Selected == want
		})
		if err != nil {
			return err
		}
		if d, ok = parseDialog(screen, scr); !ok || d.Hash != hash {
			return ErrDialogChanged
		}
	}
	if err := m.opt.Panes.SendKeysIf(ctx, pane, tmux.Guard{With: []string{firstLine(d.Text), scr.DialogMark() + " " + d.Choices[choice]}}, tmux.KeyEnter); err != nil {
		return dialogRefused(err)
	}
	m.opt.Log.Info("a dialog in Claude's terminal was answered by its person", "session", key, "choice", d.Choices[choice])
	return nil
}

func dialogRefused(err error) error {
	if errors.Is(err, tmux.ErrRefused) {
		return fmt.Errorf("%w: %w", ErrDialogChanged, err)
	}
	return err
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// listen makes t's front end the one told about the session's dialogs: the
// one that last ensured it.
func (m *Manager) listen(t Target) {
	if t.OnDialog == nil {
		return
	}
	m.mu.Lock()
	m.listeners[t.Key] = t.OnDialog
	m.mu.Unlock()
}

// showDialog tells the session's front end about a dialog, once per dialog
// (a delivery that goes through forgets it, so a later one is told again).
func (m *Manager) showDialog(key string, d Dialog) {
	if hookDialog(d) {
		return
	}
	m.mu.Lock()
	tell := m.listeners[key]
	fresh := m.shown[key] != d.Hash
	m.shown[key] = d.Hash
	m.mu.Unlock()
	if !fresh {
		return
	}
	m.opt.Log.Info("Claude shows a dialog no hook reports; it is the person's to answer", "session", key, "dialog", firstLine(d.Text))
	if tell != nil {
		tell(d)
	}
}

// noticeDialog looks at a dialog that held a delivery back (one Claude
// shows while running, such as the auto-mode nudge that comes just after
// the input box): once it has settled, and if no hook card stands for it
// (a permission prompt, a question, a plan), the front end is told. A
// session another action holds is left alone: that action may be
// answering the dialog itself (/model's "Switch model?").
func (m *Manager) noticeDialog(ctx context.Context, key string) {
	unlock, ok := m.tryLock(ctx, key)
	if !ok {
		return
	}
	d, ok := m.settledDialog(ctx, key)
	unlock()
	if ok {
		m.showDialog(key, d)
	}
}

// settledDialog returns the dialog the session's pane shows when it is
// one no hook reports: the same dialog at three looks, dialogSettle apart,
// with no hook request pending at any of them. A PermissionRequest hook
// runs beside Claude's drawing of its dialog and may record its request
// after the first settle on a loaded machine.
func (m *Manager) settledDialog(ctx context.Context, key string) (Dialog, bool) {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return Dialog{}, false
	}
	var d Dialog
	for look := range 3 {
		if look > 0 {
			select {
			case <-ctx.Done():
				return Dialog{}, false
			case <-time.After(dialogSettle):
			}
		}
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil {
			return Dialog{}, false
		}
		scr, err := m.agentOf(key)
		if err != nil {
			return Dialog{}, false
		}
		again, ok := parseDialog(screen, scr)
		if !ok || hookDialog(again) || (look > 0 && again.Hash != d.Hash) || m.carded(key) {
			return Dialog{}, false
		}
		d = again
	}
	return d, true
}

// hookDialog reports whether a dialog is one a hook reports with a card
// (permission, edit, question, plan): such a dialog is never shown or
// answered as one no hook reports. Its card says what it asks, masked and
// whole; once the card is closed (expired, or never posted), the person
// answers in the terminal or with /screen (security-3 finding 1). Words
// are compared with white space folded: Claude wraps long questions.
func hookDialog(d Dialog) bool {
	text := normalize(d.Text)
	return slices.ContainsFunc(hookMarkers, func(m string) bool { return strings.Contains(text, normalize(m)) })
}

// carded reports whether a hook card waits for an answer in the session:
// the dialog on its screen is then that card's.
func (m *Manager) carded(key string) bool {
	reqs, err := m.opt.Store.Requests.List()
	if err != nil {
		return true // unknown: leave it to the card, if any
	}
	for _, r := range reqs {
		if r.Session == key && r.Status == state.RequestPending {
			return true
		}
	}
	return false
}

// dialogWatch is how often running sessions are looked at for a dialog no
// hook reports: one screen read per session.
const dialogWatch = 3 * time.Second

// WatchDialogs tells each session's front end about a dialog its running
// Claude opens that no hook reports (a settings warning, a picker a typed
// slash command opened, anything a later release adds), as the start
// does, until ctx ends. A dialog a hook card stands for is the card's.
func (m *Manager) WatchDialogs(ctx context.Context) {
	tick := time.NewTicker(dialogWatch)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m.mu.Lock()
		keys := slices.Sorted(maps.Keys(m.listeners))
		m.mu.Unlock()
		for _, key := range keys {
			m.noticeDialog(ctx, key)
		}
	}
}

// delivered forgets the dialog last shown for a session.
func (m *Manager) delivered(key string) {
	m.mu.Lock()
	delete(m.shown, key)
	m.mu.Unlock()
}
