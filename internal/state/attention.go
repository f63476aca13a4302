package state

import (
	"strings"
	"time"
)

// Status is what Claude's statusLine input last said about one Claude
// session, keyed by its Claude session id. The statusLine command writes
// it after each assistant message; replies, /usage and the panel read it.
type Status struct {
	SessionKey string `json:"session_key,omitempty"` // CCBRIDGE_SESSION, if any
	Cwd        string `json:"cwd,omitempty"`
	PromptID   string `json:"prompt_id,omitempty"` // the turn of the last assistant message
	Model      string `json:"model,omitempty"`     // display name, e.g. "Opus 5.5"
	ModelID    string `json:"model_id,omitempty"`
	// ContextPct is the share of the context window in use (0-100); it is
	// meaningful only when HasContext.
	ContextPct   float64   `json:"context_pct,omitempty"`
	HasContext   bool      `json:"has_context,omitempty"`
	ContextSize  int64     `json:"context_size,omitempty"` // the window, in tokens
	CostUSD      float64   `json:"cost_usd,omitempty"`
	LinesAdded   int       `json:"lines_added,omitempty"`
	LinesRemoved int       `json:"lines_removed,omitempty"`
	FiveHour     *Limit    `json:"five_hour,omitempty"` // claude.ai plans only
	SevenDay     *Limit    `json:"seven_day,omitempty"`
	At           time.Time `json:"at"`
}

// Limit is one of a plan's rate limits.
type Limit struct {
	UsedPct  float64   `json:"used_pct"`
	ResetsAt time.Time `json:"resets_at,omitzero"`
}

// Prefs is what the daemon resolved from the config for one project's
// sessions, keyed by PrefsKey(server, project), so that hooks never parse
// the config.
type Prefs struct {
	Owners  []string                `json:"owners"` // who is mentioned for attention
	Project SessionPrefs            `json:"project"`
	Thread  SessionPrefs            `json:"thread"`            // threads without their own block
	Threads map[string]SessionPrefs `json:"threads,omitempty"` // by thread id
}

// DefaultSessionPrefs are what hooks use when the daemon has written no
// prefs: the config's defaults (a daemon test keeps the two equal).
var DefaultSessionPrefs = SessionPrefs{Footer: true, MirrorTerminal: true, AttentionAfter: 60 * time.Second, AttentionTurn: 5 * time.Minute}

// SessionPrefs are the attention settings of one session.
type SessionPrefs struct {
	Footer         bool          `json:"footer"`
	MirrorTerminal bool          `json:"mirror_terminal"`
	AttentionAfter time.Duration `json:"attention_after"`
	AttentionTurn  time.Duration `json:"attention_turn"`
}

// PrefsKey names the Prefs record of a project.
func PrefsKey(server, project string) string { return server + "-" + project }

// For returns the settings of the session in threadID ("" for the
// project's own session).
func (p Prefs) For(threadID string) SessionPrefs {
	if threadID == "" {
		return p.Project
	}
	if t, ok := p.Threads[threadID]; ok {
		return t
	}
	return p.Thread
}

// Delivered lists the prompts the daemon typed into a session's pane from
// Discord, keyed by session key, so the UserPromptSubmit hook can tell
// them from prompts typed at the terminal.
type Delivered struct {
	Prompts []Prompt `json:"prompts"`
}

// MaxDelivered is how many delivered prompts a record keeps.
const MaxDelivered = 16

// Add records a delivered prompt, keeping the newest MaxDelivered.
func (d *Delivered) Add(text string, at time.Time) {
	p := Prompt{At: at, Text: text}
	p.Boot, _ = bootNanos()
	d.Prompts = append(d.Prompts, p)
	if n := len(d.Prompts); n > MaxDelivered {
		d.Prompts = d.Prompts[n-MaxDelivered:]
	}
}

// Take reports whether prompt is one the daemon delivered within window
// before now, and forgets it, so the same text typed later at the
// terminal is mirrored. Whitespace is folded: Claude may re-space a paste.
func (d *Delivered) Take(prompt string, now time.Time, window time.Duration) bool {
	want := strings.Join(strings.Fields(prompt), " ")
	for i, p := range d.Prompts {
		// As the daemon's receipt check: the first 200 characters, which
		// the prompt holds even when Claude wraps a long paste.
		got := strings.Join(strings.Fields(p.Text), " ")
		if len(got) > 200 {
			got = got[:200]
		}
		if now.Sub(p.At) <= window && got != "" && strings.Contains(want, got) {
			d.Prompts = append(d.Prompts[:i:i], d.Prompts[i+1:]...)
			return true
		}
	}
	return false
}

// ResumeKind is the custom_id kind of the Continue at reset button; its
// argument is the session key.
const ResumeKind = "resume"

// Resume is a session to send "continue" to once a usage limit resets,
// keyed by session key. The daemon acts on it, and says so in the channel.
type Resume struct {
	Server          string    `json:"server"`
	ChannelID       string    `json:"channel_id"`
	ClaudeSessionID string    `json:"claude_session_id"`
	PromptID        string    `json:"prompt_id,omitempty"` // the turn that hit the limit
	At              time.Time `json:"at"`                  // when the limit resets
	Armed           bool      `json:"armed"`               // an owner clicked Continue at reset
	ArmedBy         string    `json:"armed_by,omitempty"`
	// MessageID and Face bind the Continue at reset button to the message
	// the hook posted it on, as posted (internal/guard).
	MessageID string `json:"message_id,omitempty"`
	Face      string `json:"face,omitempty"`
}

// Waiting is the last Notification a session's Claude sent that says it
// waits on a person (permission_prompt, idle_prompt), keyed by session key.
type Waiting struct {
	Kind            string    `json:"kind"`
	Message         string    `json:"message,omitempty"`
	ClaudeSessionID string    `json:"claude_session_id,omitempty"`
	PromptID        string    `json:"prompt_id,omitempty"`
	At              time.Time `json:"at"`
}

// Extras are the collections of the attention features, opened apart from
// the Store so a hook that does not need them does not pay for them.
type Extras struct {
	Statuses  *Collection[Status]
	Prefs     *Collection[Prefs]
	Delivered *Collection[Delivered]
	Resumes   *Collection[Resume]
	Waiting   *Collection[Waiting]
}

// Record format versions of the extras.
const (
	statusVersion    = 1
	prefsVersion     = 1
	deliveredVersion = 1
	resumeVersion    = 1
	waitingVersion   = 1
)

// OpenStatuses opens only the statusLine cache (the statusLine command runs
// after every assistant message and must be fast).
func OpenStatuses(d *Dir) (*Collection[Status], error) {
	return newCollection[Status](d, "statuses", statusVersion)
}

// OpenExtras opens the attention collections in d.
func OpenExtras(d *Dir) (*Extras, error) {
	var e Extras
	var err error
	if e.Statuses, err = OpenStatuses(d); err != nil {
		return nil, err
	}
	if e.Prefs, err = newCollection[Prefs](d, "prefs", prefsVersion); err != nil {
		return nil, err
	}
	if e.Delivered, err = newCollection[Delivered](d, "delivered", deliveredVersion); err != nil {
		return nil, err
	}
	if e.Resumes, err = newCollection[Resume](d, "resumes", resumeVersion); err != nil {
		return nil, err
	}
	if e.Waiting, err = newCollection[Waiting](d, "waiting", waitingVersion); err != nil {
		return nil, err
	}
	return &e, nil
}
