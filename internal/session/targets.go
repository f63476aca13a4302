package session

import (
	"fmt"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Target describes a session to run.
type Target struct {
	Key       string // CCBRIDGE_SESSION
	Window    string // tmux window name, for people who attach; default Key
	Server    string
	Project   string
	ChannelID string
	ThreadID  string
	Dir       string
	// PolicyDir is the folder asked for, whose project's [policy] holds
	// (set when Dir becomes a worktree, which may lie outside the project).
	PolicyDir      string
	Model          string
	PermissionMode string
	Progress       string
	TmuxSession    string
	// Resume is a Claude session id to continue (--resume); a Claude that
	// cannot resume it is started fresh.
	Resume string
	// Isolation "worktree" runs the session in its own git worktree.
	Isolation  string
	ThreadName string
	// Args are more Claude flags, after the configured ones. Plain leaves
	// out ccbridge's Discord system prompt (a front end that is not
	// Discord passes its own flags in Args).
	Args  []string
	Plain bool
	// Agent is the coding agent to run (config.AgentClaude or AgentCodex).
	Agent string
	// OnDialog, if set, is called when a starting Claude stops at a dialog
	// no hook reports (each dialog once, when its screen has settled): the
	// front end shows it to the person, whose answer goes back through
	// AnswerDialog. Ensure waits for the input box meanwhile.
	OnDialog func(Dialog)
}

// ProjectTarget describes the session of a project's channel.
func ProjectTarget(cfg *config.Config, srv config.Server, p config.Project) (Target, error) {
	dir, err := p.ProjectPath()
	if err != nil {
		return Target{}, err
	}
	mode := p.PermissionMode
	if mode == "" {
		mode = cfg.Claude.PermissionMode
	}
	return Target{Key: srv.Name + "-" + p.Name, Server: srv.Name, Project: p.Name, ChannelID: p.ChannelID, Dir: dir,
		Model: p.Model, PermissionMode: mode, Progress: p.Progress, TmuxSession: srv.TmuxSession, Agent: p.AgentName()}, nil
}

// ThreadTarget describes the session of a thread under a project channel.
// Settings resolve in three layers: the thread's own [[servers.projects.threads]]
// entry, then the project's [servers.projects.thread] defaults, then the
// project; what was changed from Discord (/mode, /model) comes on top.
func ThreadTarget(cfg *config.Config, srv config.Server, p config.Project, threadID string, reg state.Registered) (Target, error) {
	t, err := ProjectTarget(cfg, srv, p)
	if err != nil {
		return Target{}, err
	}
	t.Key = ThreadKey(srv.Name, p.Name, threadID)
	t.ThreadID = threadID
	pick := func(dst *string, layers ...string) {
		for _, v := range layers {
			if v != "" {
				*dst = v
				return
			}
		}
	}
	var entry config.Thread
	for _, th := range p.Threads {
		if th.ThreadID == threadID {
			entry = th
		}
	}
	t.Isolation = Isolation(p, threadID)
	pick(&t.ThreadName, reg.ThreadName, entry.Name)
	t.Window = windowName(p.Name, t.ThreadName, threadID)
	pick(&t.Model, reg.Model, entry.Model, p.Thread.Model, p.Model)
	pick(&t.PermissionMode, reg.PermissionMode, entry.PermissionMode, p.Thread.PermissionMode, p.PermissionMode, cfg.Claude.PermissionMode)
	if entry.Path != "" {
		dir, err := config.ExpandHome(entry.Path)
		if err != nil {
			return Target{}, err
		}
		t.Dir = dir
	}
	return t, nil
}

// windowName makes a thread's tmux window readable: project/thread name.
func windowName(project, thread, threadID string) string {
	if thread == "" {
		thread = threadID
	}
	name := strings.NewReplacer(".", "-", ":", "-").Replace(project + "/" + thread)
	if r := []rune(name); len(r) > 40 {
		name = string(r[:40])
	}
	return name
}

// OpenedProject is the project name of the sessions of folders opened with
// /open: no configured project can have it (names start with a letter or
// digit), so their keys and policy scopes never meet a project's.
const OpenedProject = "_open"

// ThreadKey names the session of a thread.
func ThreadKey(server, project, threadID string) string {
	return fmt.Sprintf("%s-%s-t%s", server, project, threadID)
}

// Isolation is how a thread's session works: "none" or "worktree".
func Isolation(p config.Project, threadID string) string {
	for _, th := range p.Threads {
		if th.ThreadID == threadID && th.Isolation != "" {
			return th.Isolation
		}
	}
	return p.Thread.Isolation
}
