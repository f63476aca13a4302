package state

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DurableDir returns the directory for state that must survive a reboot:
// $XDG_STATE_HOME/ccbridge, else ~/.local/state/ccbridge.
func DurableDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "ccbridge"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find state dir: %w", err)
	}
	return filepath.Join(home, ".local", "state", "ccbridge"), nil
}

// InstanceID returns this installation's id, creating it on first use. It
// is carried in every button so that daemons on several machines sharing a
// bot each ignore the others' buttons.
func InstanceID(durable string) (string, error) {
	if err := os.MkdirAll(durable, 0o700); err != nil {
		return "", fmt.Errorf("create state dir: %w", err)
	}
	p := filepath.Join(durable, "instance-id")
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read instance id: %w", err)
	}
	raw := make([]byte, 5)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	id := hex.EncodeToString(raw)
	if err := writeAtomic(p, []byte(id+"\n")); err != nil {
		return "", err
	}
	return id, nil
}

// Registered is what must survive a reboot about one session (a project
// channel or a thread), keyed like its runtime Session record: which Claude
// conversation to resume, the settings changed from Discord (never written
// to the user's config), and its worktree.
type Registered struct {
	Server          string    `json:"server"`
	Project         string    `json:"project"`
	ThreadID        string    `json:"thread_id,omitempty"`
	ThreadName      string    `json:"thread_name,omitempty"`
	ClaudeSessionID string    `json:"claude_session_id,omitempty"`
	Model           string    `json:"model,omitempty"`           // set with /model
	PermissionMode  string    `json:"permission_mode,omitempty"` // set with /mode
	Repo            string    `json:"repo,omitempty"`
	Worktree        string    `json:"worktree,omitempty"`
	Branch          string    `json:"branch,omitempty"`
	BaseCommit      string    `json:"base_commit,omitempty"`
	Archived        bool      `json:"archived,omitempty"`
	WorktreeKept    bool      `json:"worktree_kept,omitempty"` // a person chose Keep: never offer to delete it again
	KeptNotice      string    `json:"kept_notice,omitempty"`   // fingerprint of the worktree last reported kept
	Updated         time.Time `json:"updated"`
	ForkOf          string    `json:"fork_of,omitempty"` // start with --fork-session while ClaudeSessionID is still this one
	// ChannelGone is a project's channel the chat deleted: its session is
	// not started there again; the project given another channel is.
	ChannelGone string `json:"channel_gone,omitempty"`
}

const registryVersion = 1

// PanelMessage remembers a server's control-panel message, so it is edited
// in place across restarts.
type PanelMessage struct {
	ChannelID string `json:"channel_id"`
	MessageID string `json:"message_id"`
}

// Registry is the durable collection of sessions and panel messages.
type Registry struct {
	Dir       *Dir
	Sessions  *Collection[Registered]
	Panels    *Collection[PanelMessage]
	Schedules *Collection[Schedule] // schedules.go
	Opened    *Collection[Opened]   // opened.go
}

// OpenRegistry opens (creating it private) the durable state directory.
func OpenRegistry(durable string) (*Registry, error) {
	d, err := Open(durable)
	if err != nil {
		return nil, err
	}
	c, err := newCollection[Registered](d, "registry", registryVersion)
	if err != nil {
		return nil, err
	}
	panels, err := newCollection[PanelMessage](d, "panels", registryVersion)
	if err != nil {
		return nil, err
	}
	schedules, err := newCollection[Schedule](d, "schedules", registryVersion)
	if err != nil {
		return nil, err
	}
	opened, err := newCollection[Opened](d, "opened", registryVersion)
	if err != nil {
		return nil, err
	}
	return &Registry{Dir: d, Sessions: c, Panels: panels, Schedules: schedules, Opened: opened}, nil
}
