package config

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteSummary prints what the config resolves to, with tokens redacted, for
// `ccbridge config check`.
func (c *Config) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "config:      %s\n", c.Path)
	fmt.Fprintf(w, "machine:     %s (unreachable after %s without a check-in)\n", c.General.Machine, c.General.UnreachableAfter)
	fmt.Fprintf(w, "discord:     %s\n", c.Discord.APIBase)
	fmt.Fprintf(w, "tmux:        tmux -L %s\n", c.Tmux.Socket)
	fmt.Fprintf(w, "claude:      %s %v (mode %s, prompt timeout %s)\n", c.Claude.Command, c.Claude.Args, c.Claude.PermissionMode, c.Claude.PromptTimeout)
	redact := "on"
	if !c.RedactOn() {
		redact = "OFF"
	}
	fmt.Fprintf(w, "policy:      redaction %s, %s\n", redact, rules(c.Policy))
	if c.Voice.Enabled() {
		review := "reviewed before sending"
		if !c.Voice.ReviewOn() {
			review = "sent at once"
		}
		fmt.Fprintf(w, "voice:       %v (%s, timeout %s)\n", c.Voice.Command, review, c.Voice.Timeout)
	} else {
		fmt.Fprintln(w, "voice:       off (voice notes are answered with how to set [voice] command)")
	}
	for _, s := range c.Servers {
		fmt.Fprintf(w, "server %s:  guild %s, token %s, %d owner(s), tmux session %s", s.Name, s.GuildID, redactedToken(s), len(s.OwnerIDs), s.TmuxSession)
		if s.GeneralChannelID != "" {
			fmt.Fprintf(w, ", panel in %s", s.GeneralChannelID)
		}
		if len(s.OpenRoots) > 0 {
			fmt.Fprintf(w, ", /open under %s", strings.Join(s.OpenRoots, ", "))
		}
		fmt.Fprintln(w)
		for _, p := range s.Projects {
			dir, _ := p.ProjectPath()
			fmt.Fprintf(w, "  project %s: channel %s → %s", p.Name, p.ChannelID, dir)
			if p.Model != "" {
				fmt.Fprintf(w, ", model %s", p.Model)
			}
			if p.PermissionMode != "" {
				fmt.Fprintf(w, ", mode %s", p.PermissionMode)
			}
			fmt.Fprintf(w, ", threads isolated: %s", p.Thread.Isolation)
			if p.Startup {
				fmt.Fprint(w, ", starts with the daemon")
			}
			fmt.Fprintln(w)
			a := p.ThreadAttention("")
			fmt.Fprintf(w, "    progress %s, footer %s, terminal mirrored %s, owners mentioned after a card waits %s / a turn runs %s\n",
				p.Progress, onOff(a.Footer), onOff(a.MirrorTerminal), never(a.AttentionAfter), never(a.AttentionTurn))
			fmt.Fprintf(w, "    policy: %s\n", rules(c.ChannelPolicy(p)))
		}
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// never shows a duration whose zero turns a mention off.
func never(d time.Duration) string {
	if d == 0 {
		return "never"
	}
	return d.String()
}

func rules(p Policy) string {
	return fmt.Sprintf("%d ask rule(s), %d deny rule(s)", len(p.Ask), len(p.Deny))
}

// redactedToken says where the token comes from and shows only enough of it
// to tell two tokens apart.
func redactedToken(s Server) string {
	src := "inline"
	switch {
	case s.TokenEnv != "":
		src = "$" + s.TokenEnv
	case s.TokenFile != "":
		src = s.TokenFile
	}
	tok, err := s.ResolveToken()
	if err != nil {
		return src + " (unresolved)"
	}
	if len(tok) > 8 {
		return fmt.Sprintf("%s (…%s)", src, tok[len(tok)-4:])
	}
	return src + " (set)"
}
