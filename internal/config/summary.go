package config

import (
	"fmt"
	"io"
)

// WriteSummary prints what the config resolves to, with tokens redacted, for
// `ccbridge config check`.
func (c *Config) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "config:      %s\n", c.Path)
	fmt.Fprintf(w, "machine:     %s (unreachable after %s without a check-in)\n", c.General.Machine, c.General.UnreachableAfter)
	fmt.Fprintf(w, "discord:     %s\n", c.Discord.APIBase)
	fmt.Fprintf(w, "tmux:        tmux -L %s\n", c.Tmux.Socket)
	fmt.Fprintf(w, "claude:      %s %v (mode %s, prompt timeout %s)\n", c.Claude.Command, c.Claude.Args, c.Claude.PermissionMode, c.Claude.PromptTimeout)
	for _, s := range c.Servers {
		fmt.Fprintf(w, "server %s:  guild %s, token %s, %d owner(s), tmux session %s", s.Name, s.GuildID, redactedToken(s), len(s.OwnerIDs), s.TmuxSession)
		if s.GeneralChannelID != "" {
			fmt.Fprintf(w, ", panel in %s", s.GeneralChannelID)
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
		}
	}
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
