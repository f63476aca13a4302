// Package faketelegram is a fake Telegram Bot API on loopback for tests. It
// serves /bot<token>/<method> (JSON, url-encoded and multipart bodies, or a
// query string) and /file/bot<token>/<path>, keeps chats with forum topics,
// messages (text with entities, keyboards, reactions, edits), files,
// commands and an update queue, lets a test inject what people do and 429s,
// and refuses what Telegram refuses, with Telegram's error_code and
// description.
//
// From the description (testdata/telegram-bot-api.json, the Bot API 10.1 as
// PaulSonOfLars/telegram-bot-api-spec renders it, parsed once per process):
// the methods and their parameters (unknown method, missing required
// parameter, a value of none of its types), every object parameter checked
// field by field against types.<Name>.fields, recursively (InlineKeyboardMarkup
// → InlineKeyboardButton, ReplyParameters, BotCommandScope and ReactionType
// by their discriminating field), the emoji a bot may react with
// (ReactionTypeEmoji.emoji), the action fields of an inline button, and the
// shape of every result the fake itself returns.
//
// By hand, from the description's prose and Telegram's behaviour: text
// 1–4,096 and captions 0–1,024 UTF-16 code units after entity parsing and
// trimming; the HTML, MarkdownV2 and legacy Markdown parsers with tdlib's
// refusals ("can't parse entities: …"); callback_data 1–64 bytes and one
// action per inline button; one reaction per message; answerCallbackQuery
// once, within CallbackQueryTTL; editMessageText without reply_markup drops
// the keyboard, and an edit that changes nothing is "message is not
// modified"; topics (a topic's plain message replies to its creation
// message), chat actions, command names; an empty value is a missing one;
// getUpdates' offset, limit, timeout, allowed_updates and the 409 of two
// concurrent polls. Telegram answers an unknown method with 404 "Not Found"
// and a wrong token with 401 "Unauthorized" (not the 400 the specs README
// suggests for the former), and so does the fake. The wording of a type
// error is the fake's own; its status and shape are Telegram's.
//
// A request Telegram would refuse for its content also fails the test
// (t.Errorf) unless RefusalsExpected is set; so does a parameter or field
// the description does not know, which Telegram silently ignores.
package faketelegram

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is the fake. Configure its exported fields before the bot's first
// call.
type Server struct {
	URL   string // http://127.0.0.1:port, the api_base
	Token string
	Bot   User
	Owner User // the group's creator, a person tests act as
	// ChatID is the forum supergroup the bot administers.
	ChatID int64
	// CallbackQueryTTL is how long a callback query may wait for its answer.
	CallbackQueryTTL time.Duration
	// RefusalsExpected lets a test send what Telegram refuses; otherwise
	// each such request also fails the test.
	RefusalsExpected atomic.Bool

	t   testing.TB
	ts  *httptest.Server
	api *botAPI
	ids atomic.Int64 // file ids, query ids

	mu       sync.Mutex // guards everything below
	changed  chan struct{}
	done     chan struct{}
	users    map[int64]*User
	chats    map[int64]*chat
	updates  []update
	nextUpd  int64
	allowed  []string // allowed_updates in force; nil = all but the opt-in kinds
	pollGen  int64
	parked   int // a getUpdates waiting (0 or 1: a newer poll ends an older one)
	queries  map[string]*query
	files    map[string]*storedFile
	byPath   map[string]*storedFile
	commands map[string][]BotCommand
	actions  []ChatAction
	calls    []Call
	faults   []*fault
	hooks    map[string]func(Call) *Error
	handle   map[string]handler // by method, as the description spells it
	// privateTopics is the bot's forum topic mode in private chats
	// (private_topics.go).
	privateTopics bool
}

type fault struct {
	method     string
	left       int
	retryAfter int
}

// apiErr is a refusal; rule marks a request Telegram refuses for its
// content (reported to the test unless expected), as opposed to a state
// error a correct bot meets too (message to edit not found).
type apiErr struct {
	code       int
	desc       string
	retryAfter int
	rule       bool
}

func badRequest(desc string) *apiErr {
	return &apiErr{code: 400, desc: "Bad Request: " + desc, rule: true}
}
func stateErr(desc string) *apiErr { return &apiErr{code: 400, desc: "Bad Request: " + desc} }

// New starts a fake with one bot, its owner and a forum supergroup where
// the bot is an administrator, and registers its shutdown with t.Cleanup.
func New(t testing.TB) *Server {
	t.Helper()
	api, err := spec()
	if err != nil {
		t.Fatalf("faketelegram: %v", err)
	}
	s := &Server{
		Token:            "7000000001:AAFakeTelegramTokenForTests_main",
		Bot:              User{ID: 7000000001, IsBot: true, FirstName: "ccbridge", Username: "ccbridge_test_bot"},
		Owner:            User{ID: 123456789, FirstName: "Owner", Username: "owner"},
		ChatID:           -1001234567890,
		CallbackQueryTTL: 15 * time.Second,
		t:                t,
		api:              api,
		changed:          make(chan struct{}),
		done:             make(chan struct{}),
		users:            map[int64]*User{},
		chats:            map[int64]*chat{},
		nextUpd:          100000001,
		queries:          map[string]*query{},
		files:            map[string]*storedFile{},
		byPath:           map[string]*storedFile{},
		commands:         map[string][]BotCommand{},
		hooks:            map[string]func(Call) *Error{},
	}
	s.ids.Store(1000)
	s.users[s.Bot.ID] = &s.Bot
	s.users[s.Owner.ID] = &s.Owner
	s.chats[s.ChatID] = &chat{
		info:    Chat{ID: s.ChatID, Type: "supergroup", Title: "ccbridge", IsForum: true},
		members: map[int64]string{s.Owner.ID: "creator", s.Bot.ID: "administrator"},
		topics:  map[int64]*Topic{},
		byID:    map[int64]*Message{},
		// Message 1 is the group's creation: its General topic has id 1
		// in a forum, and every topic opened later a higher one.
		nextID: 2,
	}
	s.handle = s.handlers()
	mux := http.NewServeMux()
	mux.HandleFunc("/file/", s.serveFile)
	mux.HandleFunc("/", s.serveBot)
	s.ts = httptest.NewServer(mux)
	s.URL = s.ts.URL
	t.Cleanup(s.Close)
	return s
}

// Close ends long polls and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.mu.Unlock()
	s.ts.Close()
}

// notify wakes waiters; caller holds s.mu.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// WaitFor waits until cond (called without the fake's lock) is true, after
// each change the fake sees, for at most timeout.
func (s *Server) WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return cond()
		}
	}
}

// RateLimit makes the next n calls of method (as the description spells
// it) answer 429 with parameters.retry_after.
func (s *Server) RateLimit(method string, n, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, left: n, retryAfter: retryAfter})
}

// Hook runs fn before each call of method is handled; a non-nil Error is
// answered instead. fn runs without the fake's lock.
func (s *Server) Hook(method string, fn func(Call) *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks[method] = fn
}

// Calls returns every call so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	copy(out, s.calls)
	return out
}

// CallsTo returns the calls of one method.
func (s *Server) CallsTo(method string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

type handler func(p params) (any, *apiErr)

func (s *Server) handlers() map[string]handler {
	return map[string]handler{
		"getMe":                  s.getMe,
		"sendMessage":            s.sendMessage,
		"editMessageText":        s.editMessageText,
		"editMessageReplyMarkup": s.editMessageReplyMarkup,
		"deleteMessage":          s.deleteMessage,
		"sendChatAction":         s.sendChatAction,
		"setMessageReaction":     s.setMessageReaction,
		"answerCallbackQuery":    s.answerCallbackQuery,
		"sendDocument":           s.sendDocument,
		"getFile":                s.getFile,
		"createForumTopic":       s.createForumTopic,
		"closeForumTopic":        s.closeForumTopic,
		"setMyCommands":          s.setMyCommands,
		"getMyCommands":          s.getMyCommands,
		"deleteMyCommands":       s.deleteMyCommands,
		"getChat":                s.getChat,
		"getChatMember":          s.getChatMember,
	}
}

func (s *Server) serveBot(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, name, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeErr(w, &apiErr{code: 404, desc: "Not Found"})
		return
	}
	call := Call{Method: name, At: time.Now()}
	if token != s.Token {
		s.finish(w, call, nil, &apiErr{code: 401, desc: "Unauthorized"})
		return
	}
	m := s.api.byLower[strings.ToLower(name)]
	if m == nil {
		s.finish(w, call, nil, &apiErr{code: 404, desc: "Not Found"})
		return
	}
	call.Method = m.Name
	p, err := readParams(r)
	if err != nil {
		s.finish(w, call, nil, badRequest(err.Error()))
		return
	}
	call.Params = p.record()
	if e := s.takeFault(m.Name); e != nil {
		s.finish(w, call, nil, e)
		return
	}
	s.mu.Lock()
	hook := s.hooks[m.Name]
	s.mu.Unlock()
	if hook != nil {
		if e := hook(call); e != nil {
			s.finish(w, call, nil, &apiErr{code: e.Code, desc: e.Description, retryAfter: e.RetryAfter})
			return
		}
	}
	bad, unknown := s.api.checkCall(m, p)
	if len(unknown) > 0 {
		s.t.Errorf("faketelegram: %s with parameters the Bot API does not know (Telegram ignores them): %s", m.Name, strings.Join(unknown, ", "))
	}
	if bad != "" {
		s.finish(w, call, nil, &apiErr{code: 400, desc: bad, rule: true})
		return
	}
	if m.Name == "getUpdates" {
		res, e := s.getUpdates(r, p)
		if e == nil {
			if msg := s.api.checkResult(m, res); msg != "" {
				s.t.Errorf("faketelegram: its getUpdates result is not what the Bot API returns: %s", msg)
			}
		}
		s.finish(w, call, res, e)
		return
	}
	h := s.handle[m.Name]
	if h == nil {
		s.t.Errorf("faketelegram: %s is in the Bot API but the fake does not model it", m.Name)
		s.finish(w, call, nil, &apiErr{code: 501, desc: "Not Implemented: " + m.Name + " is not modelled by the fake"})
		return
	}
	res, e := h(p)
	if e == nil {
		if msg := s.api.checkResult(m, res); msg != "" {
			s.t.Errorf("faketelegram: its %s result is not what the Bot API returns: %s", m.Name, msg)
		}
	}
	s.finish(w, call, res, e)
}

// takeFault consumes an injected 429 for method.
func (s *Server) takeFault(method string) *apiErr {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.method == method && f.left > 0 {
			f.left--
			return &apiErr{code: 429, desc: fmt.Sprintf("Too Many Requests: retry after %d", f.retryAfter), retryAfter: f.retryAfter}
		}
	}
	return nil
}

// finish records the call and writes the answer.
func (s *Server) finish(w http.ResponseWriter, call Call, result any, e *apiErr) {
	call.Status = http.StatusOK
	if e != nil {
		call.Status, call.Description = e.code, e.desc
		if e.rule && !s.RefusalsExpected.Load() {
			s.t.Errorf("faketelegram: Telegram would refuse %s %s: %d %s", call.Method, short(call.Params), e.code, e.desc)
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.notify()
	s.mu.Unlock()
	if e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

// short renders parameters for a report, long values cut.
func short(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := p[k]
		if len(v) > 120 {
			v = fmt.Sprintf("%s… (%d bytes)", v[:120], len(v))
		}
		fmt.Fprintf(&b, " %s=%q", k, v)
	}
	return "{" + strings.TrimSpace(b.String()) + "}"
}

func writeErr(w http.ResponseWriter, e *apiErr) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
		body["parameters"] = map[string]any{"retry_after": e.retryAfter}
	}
	writeJSON(w, e.code, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveFile serves /file/bot<token>/<path>, as getFile promises.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	rest, _ := strings.CutPrefix(r.URL.Path, "/file/bot")
	token, path, _ := strings.Cut(rest, "/")
	if token != s.Token {
		writeErr(w, &apiErr{code: 401, desc: "Unauthorized"})
		return
	}
	s.mu.Lock()
	f := s.byPath[path]
	s.mu.Unlock()
	if f == nil {
		writeErr(w, &apiErr{code: 404, desc: "Not Found"})
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(f.data)
}

func (s *Server) String() string { return fmt.Sprintf("faketelegram(%s)", s.URL) }
