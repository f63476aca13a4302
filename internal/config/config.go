// Package config owns ccbridge's TOML configuration: the schema, defaults,
// strict decoding and validation. The program never writes the user's file,
// except `ccbridge setup` when it is run (Decode and Encode, edit.go).
// It imports no other internal package.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Config is the whole configuration file.
type Config struct {
	General  General  `toml:"general"`
	Discord  Discord  `toml:"discord"`
	Telegram Telegram `toml:"telegram"` // see telegram.go
	Tmux     Tmux     `toml:"tmux"`
	Claude   Claude   `toml:"claude"`
	Codex    Codex    `toml:"codex"` // see agent.go
	Servers  []Server `toml:"servers"`
	Policy   Policy   `toml:"policy"` // see policy.go
	Voice    Voice    `toml:"voice"`  // see voice.go
	Web      Web      `toml:"web"`    // see web.go

	// Path is the file the config was loaded from (not a TOML key).
	Path string `toml:"-"`
}

// General holds settings of this daemon as one machine of a fleet: several
// daemons (a laptop, a desktop, a build server) may share one bot, each
// owning the channels its config maps.
type General struct {
	// Machine names this daemon in the control panel and in /status; it
	// must differ between the daemons that share a bot. Default: the
	// host name (up to its first dot).
	Machine string `toml:"machine"`
	// UnreachableAfter is how long a machine may go without refreshing its
	// panel message before the other machines show it as unreachable.
	UnreachableAfter Duration `toml:"unreachable_after"`
}

// Discord holds settings shared by every bot.
type Discord struct {
	// APIBase is the origin for REST and gateway discovery, used by the daemon
	// and the hooks alike (a proxy, or a test server).
	APIBase string `toml:"api_base"`
	// CatchUp is how old a message sent while the daemon was down (or its
	// gateway lost events) may be and still be delivered on its own; older
	// ones are offered with a Deliver anyway button.
	CatchUp Duration `toml:"catch_up"`
}

// Tmux selects the dedicated tmux server.
type Tmux struct {
	Socket string `toml:"socket"` // tmux -L <socket>
}

// Claude describes how Claude Code is started.
type Claude struct {
	Command        string            `toml:"command"`
	Args           []string          `toml:"args"`
	Env            map[string]string `toml:"env"`
	PermissionMode string            `toml:"permission_mode"`
	PromptTimeout  Duration          `toml:"prompt_timeout"`
	StartTimeout   Duration          `toml:"start_timeout"`
}

// Server is one bot: a Discord bot in one guild, or a Telegram bot in one
// chat (platform = "telegram"; see telegram.go for how its ids map).
type Server struct {
	Name string `toml:"name"`
	// Platform is PlatformDiscord (the default) or PlatformTelegram.
	Platform  string `toml:"platform"`
	TokenEnv  string `toml:"token_env"`
	TokenFile string `toml:"token_file"`
	Token     string `toml:"token"`
	GuildID   string `toml:"guild_id"`
	// ChatID is a Telegram server's group, as the file says it.
	ChatID string `toml:"chat_id"`
	// OwnerIDs are Discord user ids, or Telegram user ids on a Telegram
	// server.
	OwnerIDs []string `toml:"owner_ids"`
	// GeneralChannelID is the control panel's channel; a Telegram server's
	// is derived from ChatID.
	GeneralChannelID string `toml:"general_channel_id"`
	TmuxSession      string `toml:"tmux_session"`
	// OpenRoots are the folders under which /open may start Claude in a
	// folder no project maps (none: /open is off).
	OpenRoots []string  `toml:"open_roots"`
	Projects  []Project `toml:"projects"`
}

// Project maps a Discord channel, or a Telegram forum topic, to a
// directory.
type Project struct {
	Name string `toml:"name"`
	// ChannelID routes the project's messages; on a Telegram server it is
	// derived from the server's ChatID and TopicID.
	ChannelID string `toml:"channel_id"`
	// TopicID is a Telegram project's forum topic, as the file says it.
	TopicID        string `toml:"topic_id"`
	Path           string `toml:"path"`
	Model          string `toml:"model"`
	PermissionMode string `toml:"permission_mode"`
	Startup        bool   `toml:"startup"`
	Progress       string `toml:"progress"`
	// Agent is "claude" (the default) or "codex" (see agent.go).
	Agent string `toml:"agent"`
	Attention
	Thread  ThreadDefaults `toml:"thread"`
	Threads []Thread       `toml:"threads"`
	Policy  Policy         `toml:"policy"`
}

// ThreadDefaults apply to sessions in threads under a project channel.
type ThreadDefaults struct {
	Model          string `toml:"model"`
	PermissionMode string `toml:"permission_mode"`
	Isolation      string `toml:"isolation"`
	Policy         Policy `toml:"policy"`
	Attention
}

// Thread fixes the settings of one thread.
type Thread struct {
	// ThreadID is a Discord thread's id; on a Telegram server it is derived
	// from the server's ChatID and TopicID.
	ThreadID string `toml:"thread_id"`
	// TopicID is a Telegram thread's forum topic, as the file says it.
	TopicID        string `toml:"topic_id"`
	Name           string `toml:"name"`
	Model          string `toml:"model"`
	Path           string `toml:"path"`
	PermissionMode string `toml:"permission_mode"`
	Isolation      string `toml:"isolation"`
	Startup        bool   `toml:"startup"`
	Policy         Policy `toml:"policy"`
	Attention
}

// Duration is a time.Duration written as "30m" in TOML. It remembers the
// text it was read from, so that setup writes "30m" back, not "30m0s".
type Duration struct {
	time.Duration
	text string
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	d.text = string(b)
	if err != nil {
		return fmt.Errorf("not a duration like \"30m\" or \"90s\": %q", b)
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler: the text it was read
// from while it still says the same duration.
func (d Duration) MarshalText() ([]byte, error) {
	if v, err := time.ParseDuration(d.text); err == nil && v == d.Duration {
		return []byte(d.text), nil
	}
	return []byte(d.String()), nil
}

// Allowed values, shared by validation and error messages.
var (
	PermissionModes = []string{"default", "acceptEdits", "plan", "auto", "bypassPermissions", "dontAsk"}
	// PermissionModeAliases are other words Claude Code takes for a mode:
	// its --help lists "manual" among --permission-mode's choices, for
	// "default".
	PermissionModeAliases = map[string]string{"manual": "default"}
	Isolations            = []string{"none", "worktree"}
	ProgressLevels        = []string{"off", "text", "tools", "live"}
)

// NormalizePermissionMode returns the mode an alias stands for, else mode.
func NormalizePermissionMode(mode string) string {
	if m, ok := PermissionModeAliases[mode]; ok {
		return m
	}
	return mode
}

// PermissionModeChoices lists the modes for a message, each alias with its
// mode: "default (or manual), acceptEdits, …".
func PermissionModeChoices() string {
	parts := slices.Clone(PermissionModes)
	for i, m := range parts {
		for alias, to := range PermissionModeAliases {
			if to == m {
				parts[i] += " (or " + alias + ")"
			}
		}
	}
	return strings.Join(parts, ", ")
}

// Defaults.
const (
	DefaultAPIBase        = "https://discord.com"
	DefaultSocket         = "ccbridge"
	DefaultCommand        = "claude"
	DefaultPermissionMode = "default"
	DefaultPromptTimeout  = 30 * time.Minute
	DefaultStartTimeout   = 90 * time.Second
	DefaultCatchUp        = 15 * time.Minute
	DefaultIsolation      = "none"
	DefaultProgress       = "text"
	// DefaultUnreachableAfter: a machine refreshes its panel message three
	// times within this.
	DefaultUnreachableAfter = 3 * time.Minute
	// DefaultMachine is the machine name when the host name is not usable.
	DefaultMachine = "machine"
)

// hostMachine returns the host name up to its first dot, when it is a
// valid machine name.
func hostMachine() string {
	h, err := os.Hostname()
	if err != nil {
		return DefaultMachine
	}
	h, _, _ = strings.Cut(h, ".")
	if !safeName.MatchString(h) {
		return DefaultMachine
	}
	return h
}

// EnvConfig names the environment variable that points at the config file;
// the daemon also passes it into every pane so hooks read the same file.
const EnvConfig = "CCBRIDGE_CONFIG"

// DefaultPath resolves the config path: flag, then $CCBRIDGE_CONFIG, then
// $XDG_CONFIG_HOME/ccbridge/config.toml, then ~/.config/ccbridge/config.toml.
func DefaultPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if p := os.Getenv(EnvConfig); p != "" {
		return p, nil
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "ccbridge", "config.toml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find config: %w", err)
	}
	return filepath.Join(home, ".config", "ccbridge", "config.toml"), nil
}

// Load decodes the file strictly (unknown keys are an error that lists them)
// and applies defaults. It does not validate; call Validate.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// Parse decodes TOML text strictly and applies defaults.
func Parse(text string) (*Config, error) {
	c, err := Decode(text)
	if err != nil {
		return nil, err
	}
	c.applyDefaults()
	return c, nil
}

func (c *Config) applyDefaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	if c.General.Machine == "" {
		c.General.Machine = hostMachine()
	}
	if c.General.UnreachableAfter.Duration == 0 {
		c.General.UnreachableAfter.Duration = DefaultUnreachableAfter
	}
	def(&c.Discord.APIBase, DefaultAPIBase)
	if c.Discord.CatchUp.Duration == 0 {
		c.Discord.CatchUp.Duration = DefaultCatchUp
	}
	c.Discord.APIBase = strings.TrimRight(c.Discord.APIBase, "/")
	c.Telegram.applyDefaults()
	def(&c.Tmux.Socket, DefaultSocket)
	def(&c.Claude.Command, DefaultCommand)
	def(&c.Claude.PermissionMode, DefaultPermissionMode)
	c.Codex.applyDefaults()
	c.normalizeModes()
	if c.Claude.PromptTimeout.Duration == 0 {
		c.Claude.PromptTimeout.Duration = DefaultPromptTimeout
	}
	if c.Claude.StartTimeout.Duration == 0 {
		c.Claude.StartTimeout.Duration = DefaultStartTimeout
	}
	c.Voice.applyDefaults()
	c.Web.applyDefaults()
	for i := range c.Servers {
		s := &c.Servers[i]
		def(&s.Platform, PlatformDiscord)
		def(&s.TmuxSession, "ccbridge-"+s.Name)
		s.deriveTelegramIDs()
		for j := range s.Projects {
			p := &s.Projects[j]
			def(&p.Progress, DefaultProgress)
			def(&p.Thread.Isolation, DefaultIsolation)
		}
	}
}

// ResolveToken resolves a server's bot token from token_env, token_file or token.
func (s Server) ResolveToken() (string, error) {
	switch {
	case s.TokenEnv != "":
		v := strings.TrimSpace(os.Getenv(s.TokenEnv))
		if v == "" {
			return "", fmt.Errorf("environment variable %s is not set", s.TokenEnv)
		}
		return v, nil
	case s.TokenFile != "":
		p, err := ExpandHome(s.TokenFile)
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("read token file: %w", err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("token file %s is empty", p)
		}
		return v, nil
	case s.Token != "":
		return s.Token, nil
	}
	return "", errors.New("no token: set token_env or token_file")
}

// ExpandHome replaces a leading "~/" with the user's home directory.
func ExpandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

// ProjectPath returns the project's directory, absolute and cleaned.
func (p Project) ProjectPath() (string, error) {
	d, err := ExpandHome(p.Path)
	if err != nil {
		return "", err
	}
	return filepath.Clean(d), nil
}
