package router

import (
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
)

// How the router names a session's agent to people. It never knows the
// agent itself (TestFrontEndsKnowNoAgent): the daemon tells it through
// Options.AgentTitle and Options.ResumeHint.

// agentTitle names the agent of server's project for people.
func (r *Router) agentTitle(server, project string) string {
	if s, ok := r.server(server); ok {
		for _, p := range s.Projects {
			if p.Name == project {
				return r.title(p)
			}
		}
	}
	return "Claude"
}

// agentOf names the agent of tg's session for people: an opened folder's
// is in its record (no configured project lists it).
func (r *Router) agentOf(tg target) string {
	if tg.rt.project.Name == session.OpenedProject {
		return r.title(tg.rt.project)
	}
	return r.agentTitle(tg.rt.server.Name, tg.rt.project.Name)
}

// title names p's agent for people.
func (r *Router) title(p config.Project) string {
	if r.opt.AgentTitle != nil {
		return r.opt.AgentTitle(p)
	}
	return "Claude"
}

// resumeHint is the command that continues p's conversation id in a
// terminal.
func (r *Router) resumeHint(p config.Project, id string) string {
	if r.opt.ResumeHint != nil {
		return r.opt.ResumeHint(p, id)
	}
	return "claude --resume " + id
}
