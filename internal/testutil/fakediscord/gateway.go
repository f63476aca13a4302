package fakediscord

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// gwSession is one gateway session (what RESUME resumes). It outlives its
// connection so that events dispatched while a bot is disconnected are
// replayed on RESUME.
type gwSession struct {
	id     string
	bot    *Bot
	seq    int
	events []gwEvent
	conn   *gwConn
	dead   bool // invalidated or replaced by a new IDENTIFY
	// intents are the gateway intents the session identified with.
	intents int
}

type gwEvent struct {
	seq   int
	frame []byte
}

type gwConn struct {
	ws  *websocket.Conn
	wmu sync.Mutex // serializes writes
}

func (c *gwConn) send(v any) {
	b, _ := json.Marshal(v)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *gwConn) sendRaw(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *gwConn) close() { _ = c.ws.UnderlyingConn().Close() }

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int            `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws}
	s.mu.Lock()
	s.stats.Connects++
	interval := s.HeartbeatInterval
	s.mu.Unlock()
	c.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": interval.Milliseconds()}, "s": nil, "t": nil})
	var sess *gwSession
	defer func() {
		s.mu.Lock()
		if sess != nil && sess.conn == c {
			sess.conn = nil
		}
		s.notify()
		s.mu.Unlock()
		ws.Close()
	}()
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f frame
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch f.Op {
		case 1:
			s.mu.Lock()
			s.stats.Heartbeats++
			s.mu.Unlock()
			c.send(map[string]any{"op": 11})
		case 2:
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			_ = json.Unmarshal(f.D, &id)
			if s.disallowed(id.Token, id.Intents) {
				_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4014, "Disallowed intent(s)."), time.Now().Add(time.Second))
				return
			}
			if sess = s.identify(c, id.Token, id.Intents); sess == nil {
				_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
				return
			}
		case 6:
			var res struct {
				Token     string `json:"token"`
				SessionID string `json:"session_id"`
				Seq       int    `json:"seq"`
			}
			_ = json.Unmarshal(f.D, &res)
			if sess = s.resume(c, res.Token, res.SessionID, res.Seq); sess == nil {
				c.send(map[string]any{"op": 9, "d": false})
			}
		}
	}
}

// identify starts a session: READY, then GUILD_CREATE for the bot's guild.
func (s *Server) identify(c *gwConn, token string, intents int) *gwSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	bot := s.botByToken(token)
	if bot == nil || !s.spendStart(bot) {
		return nil
	}
	s.stats.Identifies++
	s.stats.LastIntents = intents
	for _, old := range s.sessions {
		// A disconnected session is replaced; a connected one is another
		// client of the same bot (Discord allows several, e.g. one daemon
		// per machine), which keeps receiving events.
		if old.bot == bot && old.conn == nil {
			old.dead = true
		}
	}
	sess := &gwSession{id: "fake-session-" + s.id(), bot: bot, conn: c, intents: intents}
	s.sessions[sess.id] = sess
	s.sendEvent(sess, "READY", map[string]any{
		"v": 9, "user": userJSON(bot.user()), "session_id": sess.id, "resume_gateway_url": s.wsURL(),
		"guilds": []any{map[string]any{"id": bot.GuildID, "unavailable": true}}, "shard": []int{0, 1},
		"application": map[string]any{"id": bot.UserID, "flags": 0}, "private_channels": []any{},
	})
	var channels, threads []any
	for _, ch := range s.channels {
		if ch.GuildID != bot.GuildID {
			continue
		}
		if ch.isThread() {
			if !ch.Archived {
				threads = append(threads, ch.json())
			}
		} else {
			channels = append(channels, ch.json())
		}
	}
	s.sendEvent(sess, "GUILD_CREATE", map[string]any{
		"id": bot.GuildID, "name": bot.Name + "-guild", "unavailable": false, "owner_id": "1", "joined_at": timestamp(),
		"channels": nonNil(channels), "threads": nonNil(threads), "roles": []any{}, "members": []any{}, "member_count": 2,
	})
	s.notify()
	return sess
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// resume reattaches a session and replays what it missed.
func (s *Server) resume(c *gwConn, token, id string, seq int) *gwSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok || sess.dead || s.botByToken(token) != sess.bot {
		return nil
	}
	s.stats.Resumes++
	sess.conn = c
	for _, e := range sess.events {
		if e.seq > seq {
			c.sendRaw(e.frame)
		}
	}
	s.sendEvent(sess, "RESUMED", map[string]any{})
	s.notify()
	return sess
}

// sendEvent numbers, logs and (if connected) sends one dispatch; caller holds s.mu.
func (s *Server) sendEvent(sess *gwSession, t string, d any) {
	sess.seq++
	seq := sess.seq
	b, _ := json.Marshal(map[string]any{"op": 0, "t": t, "s": seq, "d": d})
	sess.events = append(sess.events, gwEvent{seq: seq, frame: b})
	if sess.conn != nil {
		sess.conn.sendRaw(b)
	}
}

// dispatchGuild sends an event to the live session of the bot in guildID;
// caller holds s.mu.
func (s *Server) dispatchGuild(guildID, t string, d any) {
	bot := s.botByGuild(guildID)
	if bot == nil {
		return
	}
	for _, sess := range s.liveSessions(bot) {
		if ev, ok := filterIntents(sess, t, d); ok {
			s.sendEvent(sess, t, ev)
		}
	}
}

func (s *Server) liveSessions(bot *Bot) []*gwSession {
	var out []*gwSession
	for _, sess := range s.sessions {
		if sess.bot == bot && !sess.dead {
			out = append(out, sess)
		}
	}
	slices.SortFunc(out, func(a, b *gwSession) int { return strings.Compare(a.id, b.id) })
	return out
}

// Connected reports whether the bot has a live, connected gateway session.
func (s *Server) Connected(bot *Bot) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.liveSessions(bot) {
		if sess.conn != nil {
			return true
		}
	}
	return false
}

// WaitConnected waits until the bot is connected.
func (s *Server) WaitConnected(bot *Bot, timeout time.Duration) bool {
	return s.waitFor(timeout, func() bool {
		for _, sess := range s.liveSessions(bot) {
			if sess.conn != nil {
				return true
			}
		}
		return false
	})
}

// DropGateway cuts the bot's gateway TCP connection; discordgo reconnects
// and RESUMEs, and the events dispatched meanwhile are replayed.
func (s *Server) DropGateway(bot *Bot) {
	s.mu.Lock()
	var conns []*gwConn
	for _, sess := range s.liveSessions(bot) {
		if sess.conn != nil {
			conns = append(conns, sess.conn)
			sess.conn = nil
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// InvalidateSession sends op 9 (not resumable); the bot must IDENTIFY again.
func (s *Server) InvalidateSession(bot *Bot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.liveSessions(bot) {
		sess.dead = true
		if sess.conn != nil {
			sess.conn.send(map[string]any{"op": 9, "d": false})
		}
	}
}
