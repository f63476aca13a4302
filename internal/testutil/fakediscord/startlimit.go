package fakediscord

import "time"

// Discord allows each bot a number of gateway session starts (IDENTIFY)
// a day, 1000 by default, and reports what is left in GET /gateway/bot's
// session_start_limit. Past the limit it terminates the bot's sessions
// and resets its token: here an IDENTIFY past it fails the test and is
// closed with 4004.

// defaultSessionStarts is the daily allowance of a bot.
const defaultSessionStarts = 1000

// startLimit is one bot's allowance: how many starts remain until reset.
type startLimit struct {
	total, remaining int
	reset            time.Time
}

// limitOf returns bot's allowance, started afresh when its day is over;
// caller holds s.mu.
func (s *Server) limitOf(bot *Bot) *startLimit {
	if s.starts == nil {
		s.starts = map[*Bot]*startLimit{}
	}
	l := s.starts[bot]
	if l == nil || time.Now().After(l.reset) {
		l = &startLimit{total: defaultSessionStarts, remaining: defaultSessionStarts, reset: time.Now().Add(24 * time.Hour)}
		s.starts[bot] = l
	}
	return l
}

// SetSessionStarts sets how many session starts bot has left and how long
// until its count resets.
func (s *Server) SetSessionStarts(bot *Bot, remaining int, resetAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limitOf(bot)
	l.remaining, l.reset = remaining, time.Now().Add(resetAfter)
}

// SessionStarts returns how many session starts bot has left.
func (s *Server) SessionStarts(bot *Bot) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limitOf(bot).remaining
}

// sessionStartLimit is GET /gateway/bot's session_start_limit.
func (s *Server) sessionStartLimit(bot *Bot) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limitOf(bot)
	return map[string]any{"total": l.total, "remaining": l.remaining,
		"reset_after": max(time.Until(l.reset).Milliseconds(), 0), "max_concurrency": 1}
}

// spendStart counts one IDENTIFY of bot; false past the limit. Caller
// holds s.mu.
func (s *Server) spendStart(bot *Bot) bool {
	l := s.limitOf(bot)
	if l.remaining <= 0 {
		s.t.Errorf("fakediscord: bot %s IDENTIFYs past its session start limit: Discord would reset its token", bot.Name)
		return false
	}
	l.remaining--
	return true
}
