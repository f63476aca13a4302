package config

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteSummary prints what the config resolves to, with tokens redacted, for
// `ccbridge config check`.
func (c *Config) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "config:      %s\n", c.Path)
	fmt.Fprintf(w, "machine:     %s (unreachable after %s without a check-in)\n", c.General.Machine, c.General.UnreachableAfter)
	fmt.Fprintf(w, "discord:     %s\n", c.Discord.APIBase)
	if slices.ContainsFunc(c.Servers, Server.Telegram) {
		fmt.Fprintf(w, "telegram:    %s\n", c.Telegram.APIBase)
	}
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
	fmt.Fprintf(w, "web:         %s\n", c.Web.summary())
	for _, s := range c.Servers {
		where, panel := "guild "+s.GuildID, s.GeneralChannelID
		if s.Telegram() {
			where, panel = "telegram chat "+s.ChatID, "the General topic"
		}
		fmt.Fprintf(w, "server %s:  %s, token %s, %d owner(s), tmux session %s", s.Name, where, redactedToken(s), len(s.OwnerIDs), s.TmuxSession)
		if panel != "" {
			fmt.Fprintf(w, ", panel in %s", panel)
		}
		if len(s.OpenRoots) > 0 {
			fmt.Fprintf(w, ", /open under %s", strings.Join(s.OpenRoots, ", "))
		}
		fmt.Fprintln(w)
		for _, p := range s.Projects {
			dir, _ := p.ProjectPath()
			channel := "channel " + p.ChannelID
			if s.Telegram() {
				channel = "topic " + p.TopicID
			}
			fmt.Fprintf(w, "  project %s: %s → %s", p.Name, channel, dir)
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

// summary says where the web view is served and how long links work.
func (w Web) summary() string {
	if !w.Enabled() {
		return "off"
	}
	reach := "this machine only"
	switch {
	case !w.Loopback() && w.TLS():
		reach = "reachable from other machines, over TLS"
	case !w.Loopback():
		reach = "reachable from other machines, without TLS"
	}
	scheme := "http"
	if w.TLS() {
		scheme = "https"
	}
	s := fmt.Sprintf("%s://%s (%s), links ", scheme, w.Listen, reach)
	if w.PublicURL != "" {
		s += "to " + w.PublicURL + ", "
	}
	return s + "valid " + w.LinkTTL.String()
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
