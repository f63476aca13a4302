package fakediscord

import (
	"net/http"
	"slices"
)

// Private threads, as Discord's API documents them:
//
//   - Start Thread without Message with type 12 makes a private thread. It
//     needs Create Private Threads in the parent (403 50013 otherwise), and
//     a parent that can hold one: a text channel (announcement and forum
//     channels cannot: 400 50024). Its creator is its first member, and
//     `invitable` (private threads only) says whether members who are not
//     moderators may add others.
//   - Add Thread Member (PUT /channels/{thread}/thread-members/{user}) needs
//     the ability to send messages in the thread (View Channel and Send
//     Messages in Threads in the parent) and a thread that is not archived
//     (400 50083); in a private thread not invitable, Manage Threads too.
//     It answers 204, also for a member already in.
//   - A private thread is seen only by its members and by those with
//     Manage Threads in the parent (CanView).

// PermCreatePrivateThreads is CREATE_PRIVATE_THREADS.
const PermCreatePrivateThreads int64 = 1 << 36

// mayStartThread answers as Discord does when a thread of type typ may not
// start under parent; caller holds s.mu.
func (s *Server) mayStartThread(w http.ResponseWriter, bot *Bot, parent *Channel, typ int) bool {
	if typ != 12 {
		return true
	}
	if parent.Type != 0 {
		apiError(w, 400, 50024, "Cannot execute action on this channel type")
		return false
	}
	perms := s.botPermissions(bot, parent.ID)
	switch {
	case perms&PermViewChannel == 0:
		apiError(w, 403, 50001, "Missing Access")
	case perms&PermCreatePrivateThreads == 0:
		apiError(w, 403, 50013, "Missing Permissions")
	default:
		return true
	}
	return false
}

// routeThreads serves the thread-members routes and a thread's delete; it reports whether it
// handled the call.
func (s *Server) routeThreads(w http.ResponseWriter, r *http.Request, bot *Bot, seg []string) bool {
	if len(seg) == 2 && seg[0] == "channels" && r.Method == "DELETE" {
		s.deleteThread(w, bot, seg[1])
		return true
	}
	if len(seg) != 4 || seg[0] != "channels" || seg[2] != "thread-members" {
		return false
	}
	switch r.Method {
	case "PUT":
		s.addThreadMember(w, bot, seg[1], seg[3])
	case "GET":
		s.getThreadMember(w, bot, seg[1], seg[3])
	default:
		return false
	}
	return true
}

func (s *Server) addThreadMember(w http.ResponseWriter, bot *Bot, threadID, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.guildChannel(w, bot, threadID)
	if !ok {
		return
	}
	if userID == "@me" {
		userID = bot.UserID
	}
	if !snowflakeParam.MatchString(userID) {
		apiError(w, 404, 10013, "Unknown User")
		return
	}
	if !th.isThread() {
		apiError(w, 400, 50024, "Cannot execute action on this channel type")
		return
	}
	perms := s.botPermissions(bot, th.ParentID)
	switch {
	case perms&PermViewChannel == 0 || (th.Type == 12 && !slices.Contains(th.Members, bot.UserID) && perms&PermManageThreads == 0):
		apiError(w, 403, 50001, "Missing Access")
		return
	case perms&PermSendInThreads == 0, th.Type == 12 && !th.Invitable && perms&PermManageThreads == 0:
		apiError(w, 403, 50013, "Missing Permissions")
		return
	case th.Archived:
		apiError(w, 400, 50083, "Thread is archived")
		return
	}
	if !slices.Contains(th.Members, userID) {
		th.Members = append(th.Members, userID)
		s.dispatchGuild(th.GuildID, "THREAD_MEMBERS_UPDATE", map[string]any{"id": th.ID, "guild_id": th.GuildID,
			"member_count": len(th.Members), "added_members": []any{map[string]any{"id": th.ID, "user_id": userID, "join_timestamp": timestamp(), "flags": 0}}})
		s.notify()
	}
	w.WriteHeader(204)
}

func (s *Server) getThreadMember(w http.ResponseWriter, bot *Bot, threadID, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.guildChannel(w, bot, threadID)
	if !ok {
		return
	}
	if !th.isThread() {
		apiError(w, 400, 50024, "Cannot execute action on this channel type")
		return
	}
	if !slices.Contains(th.Members, userID) {
		apiError(w, 404, 10007, "Unknown Member")
		return
	}
	writeJSON(w, 200, map[string]any{"id": th.ID, "user_id": userID, "join_timestamp": timestamp(), "flags": 0})
}

// threadVisible reports whether a user who may view a thread's parent may
// view the thread: a private thread only its members and those with
// Manage Threads there (perms: the user's in the parent); caller holds
// s.mu.
func threadVisible(th *Channel, userID string, perms int64) bool {
	return th.Type != 12 || slices.Contains(th.Members, userID) || perms&(PermManageThreads|permAdministrator) != 0
}

// ThreadMembers returns the members of a thread (its creator first).
func (s *Server) ThreadMembers(threadID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.channels[threadID]; ok {
		return slices.Clone(c.Members)
	}
	return nil
}

// deleteThread is DELETE /channels/{thread}: it needs Manage Threads in
// the parent (403 50013); THREAD_DELETE follows, and the thread is gone.
// Deleting other channels is not modelled (400 50024).
func (s *Server) deleteThread(w http.ResponseWriter, bot *Bot, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.guildChannel(w, bot, id)
	if !ok {
		return
	}
	if !th.isThread() {
		apiError(w, 400, 50024, "Cannot execute action on this channel type")
		return
	}
	if s.botPermissions(bot, th.ParentID)&PermManageThreads == 0 {
		apiError(w, 403, 50013, "Missing Permissions")
		return
	}
	delete(s.channels, id)
	s.dispatchGuild(th.GuildID, "THREAD_DELETE", map[string]any{"id": th.ID, "guild_id": th.GuildID, "parent_id": th.ParentID, "type": th.Type})
	s.notify()
	writeJSON(w, 200, th.json())
}
