package fakediscord

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// Reading a channel's history: GET /channels/{id}/messages, the way a bot
// catches up on what was said while it was away, and backdating a message
// so a test can make one look old.

// snowflakeParam is a snowflake as Discord's OpenAPI description has it.
var snowflakeParam = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// listMessages is GET /channels/{id}/messages. As on Discord:
//   - limit is 1 to 100 (default 50); before, after and around are
//     snowflakes; anything else is 400 50035 naming the parameter;
//   - the page is always sorted newest first: with after it holds the
//     limit messages right after that id (the oldest of them last), with
//     before the limit messages right before it, with around the messages
//     on both sides of it, and with none the latest ones;
//   - only one of around, after and before applies, in that order (a
//     request naming several is answered for the first);
//   - it needs View Channel (403 50001) where the channel stands (a thread
//     takes its parent's overwrites); without Read Message History Discord
//     answers an empty list, not an error.
//
// Ephemeral and deleted messages are not history.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, bot *Bot, chID string) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			writeFormError(w, invalid("limit", "NUMBER_TYPE_COERCE", "Value %q is not int.", v))
			return
		case n < 1:
			writeFormError(w, invalid("limit", "NUMBER_TYPE_MIN", "int value should be greater than or equal to 1."))
			return
		case n > 100:
			writeFormError(w, invalid("limit", "NUMBER_TYPE_MAX", "int value should be less than or equal to 100."))
			return
		}
		limit = n
	}
	for _, name := range []string{"around", "before", "after"} {
		if v, ok := q[name]; ok && (len(v) != 1 || !snowflakeParam.MatchString(v[0])) {
			writeFormError(w, invalid(name, "NUMBER_TYPE_COERCE", "Value %q is not snowflake.", q.Get(name)))
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.guildChannel(w, bot, chID)
	if !ok {
		return
	}
	at := chID
	if c.isThread() {
		at = c.ParentID
	}
	perms := s.botPermissions(bot, at)
	if perms&PermViewChannel == 0 {
		apiError(w, 403, 50001, "Missing Access")
		return
	}
	out := []any{}
	if perms&PermReadHistory == 0 {
		writeJSON(w, 200, out)
		return
	}
	var ids []string // oldest first
	for _, id := range s.order[chID] {
		if m := s.messages[id]; m != nil && !m.Deleted && !m.Ephemeral {
			ids = append(ids, id)
		}
	}
	sort.SliceStable(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
	from, to := max(0, len(ids)-limit), len(ids) // the latest
	switch around, before, after := q.Get("around"), q.Get("before"), q.Get("after"); {
	case around != "":
		mid := sort.Search(len(ids), func(i int) bool { return !idLess(ids[i], around) })
		from = max(0, mid-limit/2)
		to = min(len(ids), from+limit)
	case after != "":
		from = sort.Search(len(ids), func(i int) bool { return idLess(after, ids[i]) })
		to = min(len(ids), from+limit)
	case before != "":
		to = sort.Search(len(ids), func(i int) bool { return !idLess(ids[i], before) })
		from = max(0, to-limit)
	}
	for i := to - 1; i >= from; i-- {
		out = append(out, s.messageJSON(s.messages[ids[i]]))
	}
	writeJSON(w, 200, out)
}

// Backdate makes a message look as if it had been created at: its
// timestamp in every later read (history, or the message itself). Its id
// keeps its place in the channel's order, so a test can make a message
// missed while the bot was away look older than it is.
func (s *Server) Backdate(msgID string, at time.Time) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[msgID]
	if !ok {
		s.t.Fatalf("fakediscord: Backdate: no message %s", msgID)
	}
	m.created = at
	s.notify()
}

// reactionsJSON renders the bot's reactions as Discord lists them on a
// message (omitted when there are none): each is the bot's own, so me is
// true and the count 1.
func reactionsJSON(emoji []string) []any {
	var out []any
	for _, e := range emoji {
		out = append(out, map[string]any{"emoji": map[string]any{"id": nil, "name": e}, "count": 1,
			"count_details": map[string]any{"burst": 0, "normal": 1}, "burst_colors": []any{}, "me_burst": false, "me": true})
	}
	return out
}
