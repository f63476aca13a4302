package config

import (
	"fmt"
	"time"
)

// Attention holds the settings that decide what a session's channel shows
// besides Claude's replies: the footer, terminal prompts and the pings
// that bring an owner back. They are set per project, for the project's
// threads ([servers.projects.thread]) and per thread ([[...threads]]); a
// key left out takes the next level's value (thread, thread defaults,
// project, built-in default).
type Attention struct {
	// Footer "on" ends each reply with a line of model, context, cost and
	// plan limits; "off" leaves replies bare.
	Footer string `toml:"footer"`
	// MirrorTerminal posts prompts typed in the terminal to the channel.
	MirrorTerminal *bool `toml:"mirror_terminal"`
	// AttentionAfter is how long a card waits unanswered before the owners
	// are mentioned; "0s" never mentions them for cards.
	AttentionAfter *Duration `toml:"attention_after"`
	// AttentionTurn is how long a turn must have run for its end to mention
	// the owners; "0s" never mentions them for turns.
	AttentionTurn *Duration `toml:"attention_turn"`
}

// Allowed values and defaults of the attention settings.
var FooterModes = []string{"on", "off"}

const (
	DefaultMirrorTerminal = true
	DefaultAttentionAfter = 60 * time.Second
	DefaultAttentionTurn  = 5 * time.Minute
)

// Resolved is the attention settings of one session, every key set.
type Resolved struct {
	Footer         bool
	MirrorTerminal bool
	AttentionAfter time.Duration
	AttentionTurn  time.Duration
}

// Over returns a with every key it leaves out taken from base.
func (a Attention) Over(base Attention) Attention {
	if a.Footer == "" {
		a.Footer = base.Footer
	}
	if a.MirrorTerminal == nil {
		a.MirrorTerminal = base.MirrorTerminal
	}
	if a.AttentionAfter == nil {
		a.AttentionAfter = base.AttentionAfter
	}
	if a.AttentionTurn == nil {
		a.AttentionTurn = base.AttentionTurn
	}
	return a
}

// Resolve applies the built-in defaults to what a leaves out.
func (a Attention) Resolve() Resolved {
	r := Resolved{Footer: a.Footer != "off", MirrorTerminal: DefaultMirrorTerminal, AttentionAfter: DefaultAttentionAfter, AttentionTurn: DefaultAttentionTurn}
	if a.MirrorTerminal != nil {
		r.MirrorTerminal = *a.MirrorTerminal
	}
	if a.AttentionAfter != nil {
		r.AttentionAfter = a.AttentionAfter.Duration
	}
	if a.AttentionTurn != nil {
		r.AttentionTurn = a.AttentionTurn.Duration
	}
	return r
}

// ThreadAttention is the settings of a session in thread threadID under
// project p: the thread's own block, then the project's thread defaults,
// then the project. An empty threadID is the project's own session.
func (p Project) ThreadAttention(threadID string) Resolved {
	a := p.Attention
	if threadID != "" {
		a = p.Thread.Attention.Over(a)
		for _, t := range p.Threads {
			if t.ThreadID == threadID {
				a = t.Attention.Over(a)
			}
		}
	}
	return a.Resolve()
}

func (a Attention) check(v *checker, key string) {
	v.oneOf(key+".footer", a.Footer, FooterModes, true)
	for _, d := range []struct {
		name string
		val  *Duration
	}{{"attention_after", a.AttentionAfter}, {"attention_turn", a.AttentionTurn}} {
		if d.val != nil && d.val.Duration < 0 {
			v.errf(key+"."+d.name, "%s is negative; use a duration such as \"60s\", or \"0s\" for never", d.val.Duration)
		}
	}
}

func (r Resolved) String() string {
	onOff := map[bool]string{true: "on", false: "off"}
	return fmt.Sprintf("footer %s, terminal prompts mirrored %s, attention after %s / turns over %s", onOff[r.Footer], onOff[r.MirrorTerminal], r.AttentionAfter, r.AttentionTurn)
}
