package opened

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// /open starts Claude in a folder no project maps, under one of the
// server's open_roots, in a thread of its own; /close ends that.
const (
	OpenName  = "open"
	CloseName = "close"
)

// Commands are /open and /close.
func Commands() []chat.CommandSpec {
	return []chat.CommandSpec{
		{Name: OpenName, Description: "Open a folder in a thread with its own Claude", Options: []chat.OptionSpec{
			{Name: "path", Description: "a folder under the server's open_roots", Required: true, Autocomplete: true, MaxLength: 1000},
			{Name: "isolation", Description: "run it in a git worktree of its own", Choices: []chat.Choice{
				{Name: "none: in the folder itself", Value: "none"},
				{Name: "worktree: in a git worktree", Value: "worktree"},
			}}}},
		{Name: CloseName, Description: "Stop this opened folder's Claude, forget it"},
	}
}

// ErrClosed answers a message that was queued for an opened folder's
// session before /close.
var ErrClosed = errors.New("this folder was closed with /close; /open it again to go on")

// From is o opened from the channel of project p (the zero Project in the
// control-panel channel): its session runs p's agent, or the default.
func From(o state.Opened, p config.Project) state.Opened {
	o.Agent = p.Agent
	return o
}

// Project is the project an opened folder's thread runs as: the folder,
// with the agent it was opened with, the server's defaults (the agent's
// model and Claude's permission mode, the default progress, the global
// policy) and no worktree unless asked.
func Project(o state.Opened) config.Project {
	iso := o.Isolation
	if iso == "" {
		iso = config.DefaultIsolation
	}
	return config.Project{Name: session.OpenedProject, ChannelID: o.ChannelID, Path: o.Path, Agent: o.Agent,
		Progress: config.DefaultProgress, Thread: config.ThreadDefaults{Isolation: iso}}
}

// Around says why a folder may not be opened because it holds projects'
// directories, or "". A Claude opened there would reach their files
// without their [policy]: its rules (Bash ones included) cannot be scoped
// to a part of a session's tree, so the folder is refused, naming each
// project's channel.
func Around(cfg *config.Config, dir string) string {
	inside := cfg.ProjectsWithin(dir)
	if len(inside) == 0 {
		return ""
	}
	var names []string
	for _, p := range inside {
		names = append(names, fmt.Sprintf("%s (<#%s>)", p.Name, p.ChannelID))
	}
	what := "the project " + names[0]
	if len(names) > 1 {
		what = "the projects " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("`%s` holds %s, whose [policy] would not hold for a Claude opened around it: use its channel, or open a folder inside a project or beside it.", chat.Clip(dir, 300), chat.Clip(what, 1000))
}

// Folders lists the server's open folders, in the order they were opened.
func Folders(reg *state.Registry, server string) []state.Opened {
	all, _ := reg.Opened.List()
	var out []state.Opened
	for _, o := range all {
		if o.Server == server && !o.Closed {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b state.Opened) int { return a.Created.Compare(b.Created) })
	return out
}
