package router

import (
	"context"
	"errors"

	"github.com/ccbridge/ccbridge/internal/state"
)

// conversationID is the agent's conversation id the session's runtime
// record names ("" if none).
func (r *Router) conversationID(key string) string {
	s, err := r.opt.Store.Sessions.Get(key)
	if err != nil {
		return ""
	}
	return s.ClaudeSessionID
}

// errNamedSince leaves a record alone: it no longer names the conversation
// /new left (or there is none), so nothing is written.
var errNamedSince = errors.New("the record names another conversation")

// forgetConversation forgets the conversation /new left, in the runtime
// record and the registry, unless the agent already named its next one.
// Each agent records its conversation id when it has one: Claude at once
// (SessionStart "clear"), Codex only at its next prompt (its SessionStart
// is lazy). Until then a restart must start a fresh conversation, not
// resume the one /new left.
func (r *Router) forgetConversation(key, left string) {
	if left == "" {
		return
	}
	ctx := context.WithoutCancel(r.ctx)
	forget := func(id *string) error {
		if *id != left {
			return errNamedSince
		}
		*id = ""
		return nil
	}
	_, err := r.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { return forget(&s.ClaudeSessionID) })
	if err == nil || errors.Is(err, errNamedSince) {
		_, err = r.opt.Registry.Sessions.Update(ctx, key, func(g *state.Registered) error { return forget(&g.ClaudeSessionID) })
	}
	if err != nil && !errors.Is(err, errNamedSince) {
		r.opt.Log.Error("could not forget the conversation /new left", "session", key, "err", err)
	}
}
