package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Problem is one finding about a config, naming the key it concerns.
type Problem struct {
	Key     string
	Msg     string
	Warning bool // true: worth saying, but the config is usable
}

func (p Problem) Error() string { return p.Key + ": " + p.Msg }

var (
	snowflake  = regexp.MustCompile(`^[0-9]{15,21}$`)
	safeName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	maxTimeout = 24 * time.Hour
	// maxCatchUp bounds catch_up: a longer one would replay a day-old
	// conversation into Claude unasked.
	maxCatchUp = 24 * time.Hour
	// minUnreachable leaves room for three panel refreshes (at most one
	// every 3 s) before a machine counts as unreachable.
	minUnreachable = 10 * time.Second
)

// Validate reports every error in the config at once (warnings excluded),
// joined, or nil.
func (c *Config) Validate() error {
	var errs []error
	for _, p := range c.Check() {
		if !p.Warning {
			errs = append(errs, p)
		}
	}
	return errors.Join(errs...)
}

// Check returns every problem and warning, in file order.
func (c *Config) Check() []Problem {
	var v checker
	c.check(&v)
	return v.problems
}

type checker struct{ problems []Problem }

func (v *checker) errf(key, format string, args ...any) {
	v.problems = append(v.problems, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (v *checker) warnf(key, format string, args ...any) {
	v.problems = append(v.problems, Problem{Key: key, Msg: fmt.Sprintf(format, args...), Warning: true})
}

func (v *checker) oneOf(key, val string, allowed []string, emptyOK bool) {
	if (val == "" && emptyOK) || slices.Contains(allowed, val) {
		return
	}
	choices := strings.Join(allowed, ", ")
	if slices.Equal(allowed, PermissionModes) {
		choices = PermissionModeChoices()
	}
	v.errf(key, "%q is not allowed; use one of %s", val, choices)
}

// normalizeModes replaces each permission mode alias ("manual") with the
// mode it stands for, so the rest of ccbridge knows only the modes.
func (c *Config) normalizeModes() {
	n := NormalizePermissionMode
	c.Claude.PermissionMode = n(c.Claude.PermissionMode)
	for i := range c.Servers {
		for j := range c.Servers[i].Projects {
			p := &c.Servers[i].Projects[j]
			p.PermissionMode, p.Thread.PermissionMode = n(p.PermissionMode), n(p.Thread.PermissionMode)
			for k := range p.Threads {
				p.Threads[k].PermissionMode = n(p.Threads[k].PermissionMode)
			}
		}
	}
}

// httpURL checks that val is an http(s) URL with a host.
func (v *checker) httpURL(key, val, example string) {
	if u, err := url.Parse(val); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errf(key, "%q must be an http(s) URL such as %s", val, example)
	}
}

func (v *checker) id(key, val string, required bool) {
	switch {
	case val == "" && required:
		v.errf(key, "missing; set it to the Discord id (Developer Mode → right click → Copy ID)")
	case val != "" && !snowflake.MatchString(val):
		v.errf(key, "%q is not a Discord id (15 to 21 digits)", val)
	}
}

func (v *checker) dir(key, val string, required bool) {
	if val == "" {
		if required {
			v.errf(key, "missing; set it to the project directory")
		}
		return
	}
	p, ok := v.absPath(key, val)
	if !ok {
		return
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		v.warnf(key, "%s does not exist yet; sessions there cannot start until it does", p)
	case !fi.IsDir():
		v.errf(key, "%s is not a directory", p)
	}
}

// name checks the name of the i-th entry of a list and returns the key that
// names the entry in messages: list[name], or list[i] when it has none.
//
// An entry whose name an earlier one has is named by its index, so that a
// message about it does not seem to point at the first.
func (v *checker) name(list string, i int, name string, seen map[string]bool, dupWhere string) string {
	key := fmt.Sprintf("%s[%d]", list, i)
	if name != "" && !seen[name] {
		key = fmt.Sprintf("%s[%s]", list, name)
	}
	switch {
	case name == "":
		v.errf(key+".name", "missing; a short name such as \"home\" or \"api\"")
	case !safeName.MatchString(name):
		v.errf(key+".name", "%q may hold only letters, digits, - and _", name)
	case seen[name]:
		v.errf(key+".name", "%q is used by %s", name, dupWhere)
	}
	seen[name] = true
	return key
}

func (c *Config) check(v *checker) {
	if !safeName.MatchString(c.General.Machine) {
		v.errf("general.machine", "%q may hold only letters, digits, - and _ (at most 64)", c.General.Machine)
	}
	if d := c.General.UnreachableAfter.Duration; d < minUnreachable || d > time.Hour {
		v.errf("general.unreachable_after", "%s must be between %s and 1h", d, minUnreachable)
	}
	v.httpURL("discord.api_base", c.Discord.APIBase, "https://discord.com")
	if d := c.Discord.CatchUp.Duration; d < time.Second || d > maxCatchUp {
		v.errf("discord.catch_up", "%s must be between 1s and %s (how old a message sent while ccbridge was down may be and still be delivered)", d, maxCatchUp)
	}
	v.httpURL("telegram.api_base", c.Telegram.APIBase, DefaultTelegramAPIBase)
	if d := c.Telegram.CatchUp.Duration; d != 0 && (d < time.Second || d > maxCatchUp) {
		v.errf("telegram.catch_up", "%s must be between 1s and %s (how old a message sent to a Telegram bot while ccbridge was down may be and still be delivered)", d, maxCatchUp)
	}
	if !safeName.MatchString(c.Tmux.Socket) {
		v.errf("tmux.socket", "%q must be a plain name (letters, digits, - and _), not a path", c.Tmux.Socket)
	}
	if strings.TrimSpace(c.Claude.Command) == "" {
		v.errf("claude.command", "must not be empty")
	}
	v.oneOf("claude.permission_mode", c.Claude.PermissionMode, PermissionModes, false)
	if d := c.Claude.PromptTimeout.Duration; d <= 0 || d > maxTimeout {
		v.errf("claude.prompt_timeout", "%s must be between 1s and %s", d, maxTimeout)
	}
	if d := c.Claude.StartTimeout.Duration; d <= 0 || d > 10*time.Minute {
		v.errf("claude.start_timeout", "%s must be between 1s and 10m", d)
	}
	for k := range c.Claude.Env {
		switch {
		case !envName.MatchString(k):
			v.errf("claude.env."+k, "not a valid environment variable name")
		case strings.HasPrefix(k, "CCBRIDGE_"):
			v.errf("claude.env."+k, "CCBRIDGE_* variables are set by ccbridge itself")
		}
	}
	if len(c.Servers) == 0 {
		v.errf("servers", "no [[servers]] yet: run `ccbridge setup` to add your bot (its server, owners and projects)")
	}
	serverNames := map[string]bool{}
	channels := map[string]string{} // channel id → key of its first use
	chats := map[string]string{}    // Telegram chat id → key of its first use
	for i, s := range c.Servers {
		sk := v.name("servers", i, s.Name, serverNames, "more than one server")
		c.checkToken(v, sk, s)
		// An unknown platform's ids are neither platform's: checking them
		// as either would only add noise to the one error that matters.
		v.oneOf(sk+".platform", s.Platform, Platforms, false)
		known := slices.Contains(Platforms, s.Platform)
		switch {
		case s.Telegram():
			v.telegramServer(sk, s, chats)
		case known:
			v.discordServer(sk, s, channels)
		}
		if strings.ContainsAny(s.TmuxSession, ".:") || strings.TrimSpace(s.TmuxSession) == "" {
			v.errf(sk+".tmux_session", "%q must not be empty or contain '.' or ':'", s.TmuxSession)
		}
		checkOpenRoots(v, sk, s.OpenRoots)
		if len(s.Projects) == 0 {
			v.warnf(sk+".projects", "no projects: this bot will answer nothing")
		}
		projectNames := map[string]bool{}
		topics := map[string]string{} // this server's topic id → key of its first use
		for j, p := range s.Projects {
			pk := v.name(sk+".projects", j, p.Name, projectNames, "more than one project of this server")
			switch {
			case s.Telegram():
				v.telegramTopic(pk, "project", "channel_id", s, p.TopicID, p.ChannelID, topics)
			case known:
				v.discordTopic(pk, "project", "channel_id", p.TopicID)
				v.id(pk+".channel_id", p.ChannelID, true)
				if prev, dup := channels[p.ChannelID]; dup && p.ChannelID != "" {
					v.errf(pk+".channel_id", "%s is already used by %s; a channel belongs to one project", p.ChannelID, prev)
				} else if p.ChannelID != "" {
					channels[p.ChannelID] = pk + ".channel_id"
				}
			}
			v.dir(pk+".path", p.Path, true)
			v.oneOf(pk+".permission_mode", p.PermissionMode, PermissionModes, true)
			v.oneOf(pk+".progress", p.Progress, ProgressLevels, false)
			v.oneOf(pk+".agent", p.Agent, Agents, true)
			v.oneOf(pk+".thread.permission_mode", p.Thread.PermissionMode, PermissionModes, true)
			v.oneOf(pk+".thread.isolation", p.Thread.Isolation, Isolations, false)
			p.Attention.check(v, pk)
			p.Thread.Attention.check(v, pk+".thread")
			threadIDs := map[string]bool{}
			for k, t := range p.Threads {
				tk := fmt.Sprintf("%s.threads[%d]", pk, k)
				switch {
				case s.Telegram():
					v.telegramTopic(tk, "thread", "thread_id", s, t.TopicID, t.ThreadID, topics)
				case known:
					v.discordTopic(tk, "thread", "thread_id", t.TopicID)
					v.id(tk+".thread_id", t.ThreadID, true)
					if threadIDs[t.ThreadID] && t.ThreadID != "" {
						v.errf(tk+".thread_id", "%s is listed twice", t.ThreadID)
					}
					threadIDs[t.ThreadID] = true
				}
				v.dir(tk+".path", t.Path, false)
				v.oneOf(tk+".permission_mode", t.PermissionMode, PermissionModes, true)
				v.oneOf(tk+".isolation", t.Isolation, Isolations, true)
				t.Attention.check(v, tk)
			}
		}
	}
	c.checkPolicies(v)
	c.Voice.check(v)
	c.Web.check(v)
}

// discordServer checks a Discord server's own keys. channels maps each
// channel id to the key of its first use.
func (v *checker) discordServer(sk string, s Server, channels map[string]string) {
	if s.ChatID != "" {
		v.errf(sk+".chat_id", "chat_id is a Telegram key; a Discord server has guild_id (a Telegram server says platform = %q)", PlatformTelegram)
	}
	v.id(sk+".guild_id", s.GuildID, true)
	if len(s.OwnerIDs) == 0 {
		v.errf(sk+".owner_ids", "empty; list the Discord user ids allowed to drive sessions")
	}
	for j, o := range s.OwnerIDs {
		v.id(fmt.Sprintf("%s.owner_ids[%d]", sk, j), o, true)
	}
	v.id(sk+".general_channel_id", s.GeneralChannelID, false)
	if s.GeneralChannelID != "" {
		channels[s.GeneralChannelID] = sk + ".general_channel_id"
	}
}

func (c *Config) checkToken(v *checker, sk string, s Server) {
	set := 0
	for _, x := range []string{s.TokenEnv, s.TokenFile, s.Token} {
		if x != "" {
			set++
		}
	}
	if set > 1 {
		v.errf(sk+".token_env", "set only one of token_env, token_file and token")
		return
	}
	if set == 0 {
		v.errf(sk+".token_env", "no bot token: set token_env (a variable name) or token_file (a 0600 file)")
		return
	}
	key := sk + ".token_env"
	switch {
	case s.TokenFile != "":
		key = sk + ".token_file"
	case s.Token != "":
		key = sk + ".token"
	}
	if _, err := s.ResolveToken(); err != nil {
		v.errf(key, "%v", err)
		return
	}
	if s.TokenFile != "" {
		p, _ := ExpandHome(s.TokenFile)
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
			v.warnf(key, "%s is readable by others (mode %o); chmod 600 it", p, fi.Mode().Perm())
		}
	}
	if s.Token != "" && c.Path != "" {
		fi, err := os.Stat(c.Path)
		if err != nil || fi.Mode().Perm()&0o077 != 0 {
			v.warnf(key, "an inline token in a file others can read; prefer token_file or token_env, or chmod 600 %s", c.Path)
		}
	}
}

// checkOpenRoots checks the folders /open may open folders under: each an
// absolute path (or under ~/), a directory when it exists (a disk not
// mounted yet only warns), listed once.
func checkOpenRoots(v *checker, sk string, roots []string) {
	seen := map[string]bool{}
	for i, root := range roots {
		key := fmt.Sprintf("%s.open_roots[%d]", sk, i)
		if strings.TrimSpace(root) == "" {
			v.errf(key, "empty; give a folder such as \"~/src\"")
			continue
		}
		v.dir(key, root, true)
		if p, err := ExpandHome(root); err == nil {
			p = filepath.Clean(p)
			if seen[p] {
				v.errf(key, "%s is listed twice", p)
			}
			seen[p] = true
		}
	}
}

// absPath expands a path key's ~ and requires an absolute path.
func (v *checker) absPath(key, val string) (string, bool) {
	p, err := ExpandHome(val)
	if err != nil {
		v.errf(key, "%v", err)
		return "", false
	}
	if !filepath.IsAbs(p) {
		v.errf(key, "%q must be an absolute path or start with ~/", val)
		return "", false
	}
	return p, true
}
