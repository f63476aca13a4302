package fakediscord

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rejected checks a Discord error answer: status, code and, for 50035,
// that errors holds the field path.
func rejected(t *testing.T, name string, status int, body map[string]any, wantStatus, wantCode int, wantPath string) {
	t.Helper()
	if status != wantStatus || code(body) != wantCode {
		t.Errorf("%s: got %d code %d (%v), want %d code %d", name, status, code(body), body, wantStatus, wantCode)
		return
	}
	if wantPath == "" {
		return
	}
	var node any = body["errors"]
	for _, p := range strings.Split(wantPath, ".") {
		m, _ := node.(map[string]any)
		if node = m[p]; node == nil {
			t.Errorf("%s: errors %v lack the path %s", name, body["errors"], wantPath)
			return
		}
	}
	if m, _ := node.(map[string]any); m["_errors"] == nil {
		t.Errorf("%s: errors at %s have no _errors: %v", name, wantPath, node)
	}
}

func accepted(t *testing.T, name string, status int, body map[string]any) {
	t.Helper()
	if status/100 != 2 {
		t.Errorf("%s: rejected with %d %v", name, status, body)
	}
}

func btn(id, label string) map[string]any {
	return map[string]any{"type": 2, "style": 1, "custom_id": id, "label": label}
}

func row(cs ...any) map[string]any { return map[string]any{"type": 1, "components": cs} }

// link is a link button (style 5): a url, no custom_id.
func link(url string) map[string]any {
	return map[string]any{"type": 2, "style": 5, "label": "Open in browser", "url": url}
}

func opt(label, value string) map[string]any { return map[string]any{"label": label, "value": value} }

func sel(opts ...any) map[string]any {
	return map[string]any{"type": 3, "custom_id": "sel", "options": opts}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func TestMessageRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/channels/" + bot.ChannelID + "/messages"
	x := func(n int) string { return strings.Repeat("x", n) }
	opts := func(n int) []any {
		var out []any
		for i := range n {
			out = append(out, opt(fmt.Sprint("l", i), fmt.Sprint("v", i)))
		}
		return out
	}
	bad := []struct {
		name  string
		body  map[string]any
		path  string
		code  int
		state int
	}{
		{"2001 runes", map[string]any{"content": strings.Repeat("é", 2001)}, "content", 50035, 400},
		{"empty", map[string]any{"content": ""}, "", 50006, 400},
		{"nothing", map[string]any{}, "", 50006, 400},
		{"long nonce", map[string]any{"content": "x", "nonce": x(26)}, "nonce", 50035, 400},
		{"top-level button", map[string]any{"content": "x", "components": []any{btn("a", "a")}}, "components.0", 50035, 400},
		{"empty row", map[string]any{"content": "x", "components": []any{row()}}, "components.0.components", 50035, 400},
		{"6 rows", map[string]any{"content": "x", "components": []any{row(btn("1", "a")), row(btn("2", "a")), row(btn("3", "a")), row(btn("4", "a")), row(btn("5", "a")), row(btn("6", "a"))}}, "components", 50035, 400},
		{"6 buttons", map[string]any{"content": "x", "components": []any{row(btn("1", "a"), btn("2", "a"), btn("3", "a"), btn("4", "a"), btn("5", "a"), btn("6", "a"))}}, "components.0.components", 50035, 400},
		{"label 81", map[string]any{"content": "x", "components": []any{row(btn("a", x(81)))}}, "components.0.components.0.label", 50035, 400},
		{"no label or emoji", map[string]any{"content": "x", "components": []any{row(with(btn("a", ""), "label", nil))}}, "components.0.components.0", 50035, 400},
		{"style 7", map[string]any{"content": "x", "components": []any{row(with(btn("a", "a"), "style", 7))}}, "components.0.components.0.style", 50035, 400},
		{"no style", map[string]any{"content": "x", "components": []any{row(with(btn("a", "a"), "style", nil))}}, "components.0.components.0.style", 50035, 400},
		{"link without url", map[string]any{"content": "x", "components": []any{row(map[string]any{"type": 2, "style": 5, "label": "go"})}}, "components.0.components.0.url", 50035, 400},
		{"link with custom_id", map[string]any{"content": "x", "components": []any{row(map[string]any{"type": 2, "style": 5, "label": "go", "url": "https://x.test", "custom_id": "a"})}}, "components.0.components.0.custom_id", 50035, 400},
		{"button with url", map[string]any{"content": "x", "components": []any{row(with(btn("a", "a"), "url", "https://x.test"))}}, "components.0.components.0.url", 50035, 400},
		{"link to javascript:", map[string]any{"content": "x", "components": []any{row(link("javascript:alert(1)"))}}, "components.0.components.0.url", 50035, 400},
		{"link to ftp:", map[string]any{"content": "x", "components": []any{row(link("ftp://x.test/f"))}}, "components.0.components.0.url", 50035, 400},
		{"link to no host", map[string]any{"content": "x", "components": []any{row(link("https://"))}}, "components.0.components.0.url", 50035, 400},
		{"link not a url", map[string]any{"content": "x", "components": []any{row(link("x.test/a b"))}}, "components.0.components.0.url", 50035, 400},
		{"link url 513", map[string]any{"content": "x", "components": []any{row(link("https://x.test/" + x(513-len("https://x.test/"))))}}, "components.0.components.0.url", 50035, 400},
		{"custom_id 101", map[string]any{"content": "x", "components": []any{row(btn(x(101), "a"))}}, "components.0.components.0.custom_id", 50035, 400},
		{"no custom_id", map[string]any{"content": "x", "components": []any{row(with(btn("a", "a"), "custom_id", nil))}}, "components.0.components.0.custom_id", 50035, 400},
		{"duplicate custom_id", map[string]any{"content": "x", "components": []any{row(btn("a", "a"), btn("a", "b"))}}, "components.0.components.1.custom_id", 50035, 400},
		{"select not alone", map[string]any{"content": "x", "components": []any{row(sel(opt("a", "a")), btn("b", "b"))}}, "components.0.components", 50035, 400},
		{"0 options", map[string]any{"content": "x", "components": []any{row(sel())}}, "components.0.components.0.options", 50035, 400},
		{"26 options", map[string]any{"content": "x", "components": []any{row(sel(opts(26)...))}}, "components.0.components.0.options", 50035, 400},
		{"option label empty", map[string]any{"content": "x", "components": []any{row(sel(opt("", "a")))}}, "components.0.components.0.options.0.label", 50035, 400},
		{"option label 101", map[string]any{"content": "x", "components": []any{row(sel(opt(x(101), "a")))}}, "components.0.components.0.options.0.label", 50035, 400},
		{"option value 101", map[string]any{"content": "x", "components": []any{row(sel(opt("a", x(101))))}}, "components.0.components.0.options.0.value", 50035, 400},
		{"option description 101", map[string]any{"content": "x", "components": []any{row(sel(with(opt("a", "a"), "description", x(101))))}}, "components.0.components.0.options.0.description", 50035, 400},
		{"duplicate values", map[string]any{"content": "x", "components": []any{row(sel(opt("a", "v"), opt("b", "v")))}}, "components.0.components.0.options.1.value", 50035, 400},
		{"placeholder 151", map[string]any{"content": "x", "components": []any{row(with(sel(opt("a", "a")), "placeholder", x(151)))}}, "components.0.components.0.placeholder", 50035, 400},
		{"min_values 26", map[string]any{"content": "x", "components": []any{row(with(sel(opts(25)...), "min_values", 26, "max_values", 25))}}, "components.0.components.0.min_values", 50035, 400},
		{"max_values 0", map[string]any{"content": "x", "components": []any{row(with(sel(opt("a", "a")), "max_values", 0))}}, "components.0.components.0.max_values", 50035, 400},
		{"min > max", map[string]any{"content": "x", "components": []any{row(with(sel(opts(3)...), "min_values", 3, "max_values", 2))}}, "components.0.components.0.min_values", 50035, 400},
		{"max > options", map[string]any{"content": "x", "components": []any{row(with(sel(opts(2)...), "max_values", 3))}}, "components.0.components.0.max_values", 50035, 400},
		{"select custom_id 101", map[string]any{"content": "x", "components": []any{row(with(sel(opt("a", "a")), "custom_id", x(101)))}}, "components.0.components.0.custom_id", 50035, 400},
	}
	for _, c := range bad {
		st, body := call(t, srv, auth, "POST", path, c.body)
		rejected(t, c.name, st, body, c.state, c.code, c.path)
	}
	if n := len(srv.Messages(bot.ChannelID)); n != 0 {
		t.Fatalf("%d rejected messages were created", n)
	}
	good := []struct {
		name string
		body map[string]any
	}{
		{"2000 runes", map[string]any{"content": strings.Repeat("é", 2000)}},
		{"label 80", map[string]any{"content": "x", "components": []any{row(btn("a", x(80)))}}},
		{"emoji only", map[string]any{"content": "x", "components": []any{row(with(btn("a", ""), "emoji", map[string]any{"name": "✅"}))}}},
		{"link button", map[string]any{"content": "x", "components": []any{row(map[string]any{"type": 2, "style": 5, "label": "go", "url": "https://x.test"})}}},
		{"link url 512", map[string]any{"content": "x", "components": []any{row(link("http://127.0.0.1:7878/s/" + x(512-len("http://127.0.0.1:7878/s/"))))}}},
		{"link to discord:", map[string]any{"content": "x", "components": []any{row(link("discord://-/channels/1/2"))}}},
		{"link beside a button", map[string]any{"content": "x", "components": []any{row(btn("a", "a"), link("https://x.test/a"))}}},
		{"25 options, 25 values", map[string]any{"content": "x", "components": []any{row(with(sel(opts(25)...), "min_values", 0, "max_values", 25, "placeholder", x(150)))}}},
		// Documented only as "max 100 characters": an empty description passes.
		{"empty description", map[string]any{"content": "x", "components": []any{row(sel(with(opt("a", "a"), "description", "")))}}},
		{"components only", map[string]any{"components": []any{row(btn("a", "a"))}}},
		{"int nonce", map[string]any{"content": "x", "nonce": 12345678901234567}},
	}
	for _, c := range good {
		st, body := call(t, srv, auth, "POST", path, c.body)
		accepted(t, c.name, st, body)
	}
}

func TestEditRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/channels/" + bot.ChannelID + "/messages"
	_, text := call(t, srv, auth, "POST", path, map[string]any{"content": "text"})
	_, card := call(t, srv, auth, "POST", path, map[string]any{"content": "card", "components": []any{row(btn("a", "a"))}})
	st, body := call(t, srv, auth, "PATCH", path+"/"+text["id"].(string), map[string]any{"content": ""})
	rejected(t, "emptied text", st, body, 400, 50006, "")
	st, body = call(t, srv, auth, "PATCH", path+"/"+card["id"].(string), map[string]any{"content": ""})
	accepted(t, "card keeps its buttons", st, body)
	st, body = call(t, srv, auth, "PATCH", path+"/"+card["id"].(string), map[string]any{"content": "", "components": []any{}})
	rejected(t, "emptied card", st, body, 400, 50006, "")
	st, body = call(t, srv, auth, "PATCH", path+"/"+card["id"].(string), map[string]any{"components": []any{row(btn("a", x81()))}})
	rejected(t, "bad component on edit", st, body, 400, 50035, "components.0.components.0.label")
	if m, _ := srv.Message(text["id"].(string)); m.Content != "text" {
		t.Errorf("a rejected edit changed the message: %q", m.Content)
	}
	st, body = call(t, srv, auth, "PATCH", path+"/999", map[string]any{"content": "x"})
	rejected(t, "unknown message", st, body, 404, 10008, "")
}

func x81() string { return strings.Repeat("x", 81) }

// upload posts a multipart message with the given parts.
func upload(t *testing.T, srv *Server, token, chID, payload string, parts map[string][]byte) (int, map[string]any) {
	t.Helper()
	ct, body := multipartBody(t, payload, parts)
	req, _ := http.NewRequest("POST", srv.URL+"/api/v9/channels/"+chID+"/messages", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", token)
	return do1(t, req)
}

func TestFileRules(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	eleven := map[string][]byte{}
	for i := range 11 {
		eleven[fmt.Sprintf("files[%d]", i)] = []byte("x")
	}
	st, body := upload(t, srv, auth, bot.ChannelID, `{"content":"x"}`, eleven)
	rejected(t, "11 files", st, body, 400, 30015, "")
	st, body = upload(t, srv, auth, bot.ChannelID, `{"content":"x"}`, map[string][]byte{"files[0]": make([]byte, MaxFileSize+1)})
	rejected(t, "10 MiB + 1", st, body, 413, 40005, "")
	if n := len(srv.Messages(bot.ChannelID)); n != 0 {
		t.Fatalf("%d messages from rejected uploads", n)
	}
	delete(eleven, "files[10]")
	st, body = upload(t, srv, auth, bot.ChannelID, `{"content":"x"}`, eleven)
	accepted(t, "10 files", st, body)
	st, body = upload(t, srv, auth, bot.ChannelID, `{"content":"x"}`, map[string][]byte{"files[0]": make([]byte, MaxFileSize)})
	accepted(t, "10 MiB", st, body)
	// Only files[n] parts are files.
	st, body = upload(t, srv, auth, bot.ChannelID, `{}`, map[string][]byte{"file": []byte("x")})
	rejected(t, "a part named file", st, body, 400, 50006, "")
	st, body = upload(t, srv, auth, bot.ChannelID, `{"content":"y"}`, map[string][]byte{"attachment": []byte("x")})
	accepted(t, "content with a stray part", st, body)
	if m, _ := srv.Message(body["id"].(string)); len(m.Files) != 0 {
		t.Errorf("a part not named files[n] became a file: %+v", m.Files)
	}
}

func TestEditKeepsOrDropsFiles(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	_, body := upload(t, srv, auth, bot.ChannelID, `{"content":"x"}`, map[string][]byte{"files[0]": []byte("a"), "files[1]": []byte("b")})
	id := body["id"].(string)
	atts, _ := body["attachments"].([]any)
	if len(atts) != 2 {
		t.Fatalf("attachments = %v", body["attachments"])
	}
	path := "/channels/" + bot.ChannelID + "/messages/" + id
	st, body := call(t, srv, auth, "PATCH", path, map[string]any{"content": "y"})
	if accepted(t, "edit without attachments", st, body); len(body["attachments"].([]any)) != 2 {
		t.Errorf("an edit without attachments dropped files: %v", body["attachments"])
	}
	keep := atts[1].(map[string]any)["id"]
	st, body = call(t, srv, auth, "PATCH", path, map[string]any{"attachments": []any{map[string]any{"id": keep}}})
	got := body["attachments"].([]any)
	if accepted(t, "edit keeping one", st, body); len(got) != 1 || got[0].(map[string]any)["id"] != keep {
		t.Errorf("attachments after keeping %v: %v", keep, got)
	}
	st, body = call(t, srv, auth, "PATCH", path, map[string]any{"content": "", "attachments": []any{}})
	rejected(t, "dropping everything", st, body, 400, 50006, "")
}

func TestAuthAndUnknowns(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	path := "/channels/" + bot.ChannelID + "/messages"
	st, body := call(t, srv, bot.Token, "POST", path, map[string]any{"content": "x"})
	rejected(t, "token without Bot", st, body, 401, 0, "")
	auth := "Bot " + bot.Token
	st, body = call(t, srv, auth, "POST", "/channels/999/messages", map[string]any{"content": "x"})
	rejected(t, "unknown channel", st, body, 404, 10003, "")
	st, body = call(t, srv, auth, "GET", path+"/999", nil)
	rejected(t, "unknown message", st, body, 404, 10008, "")
	_, m := call(t, srv, auth, "POST", path, map[string]any{"content": "x"})
	id := m["id"].(string)
	for _, e := range []string{"✅", "⏳", "⚠️", "⚠", "1️⃣", "👍🏽"} {
		st, body := call(t, srv, auth, "PUT", path+"/"+id+"/reactions/"+e+"/@me", nil)
		accepted(t, "reaction "+e, st, body)
	}
	for _, e := range []string{"ok", "x", "custom:123", "warning"} {
		st, body := call(t, srv, auth, "PUT", path+"/"+id+"/reactions/"+e+"/@me", nil)
		rejected(t, "reaction "+e, st, body, 400, 10014, "")
	}
	call(t, srv, auth, "DELETE", path+"/"+id, nil)
	st, body = call(t, srv, auth, "PUT", path+"/"+id+"/reactions/✅/@me", nil)
	rejected(t, "reaction on a deleted message", st, body, 404, 10008, "")
}

func TestThreadRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/channels/" + bot.ChannelID + "/threads"
	for _, c := range []struct {
		name string
		body map[string]any
		path string
	}{
		{"empty name", map[string]any{"name": "", "type": 11}, "name"},
		{"name 101", map[string]any{"name": strings.Repeat("é", 101), "type": 11}, "name"},
		{"archive 30", map[string]any{"name": "t", "type": 11, "auto_archive_duration": 30}, "auto_archive_duration"},
		{"type 2", map[string]any{"name": "t", "type": 2}, "type"},
	} {
		st, body := call(t, srv, auth, "POST", path, c.body)
		rejected(t, c.name, st, body, 400, 50035, c.path)
	}
	for _, d := range []int{60, 1440, 4320, 10080} {
		st, body := call(t, srv, auth, "POST", path, map[string]any{"name": strings.Repeat("é", 100), "type": 11, "auto_archive_duration": d})
		accepted(t, fmt.Sprint("archive ", d), st, body)
		if d == 4320 {
			if md := body["thread_metadata"].(map[string]any); md["auto_archive_duration"] != float64(4320) {
				t.Errorf("thread_metadata = %v", md)
			}
		}
	}
	th := srv.Threads(bot.ChannelID)[0].ID
	st, body := call(t, srv, auth, "POST", "/channels/"+th+"/threads", map[string]any{"name": "nested", "type": 11})
	rejected(t, "thread in a thread", st, body, 400, 50024, "")
	st, body = call(t, srv, auth, "PATCH", "/channels/"+th, map[string]any{"name": strings.Repeat("x", 101)})
	rejected(t, "rename to 101", st, body, 400, 50035, "name")
	st, body = call(t, srv, auth, "PATCH", "/channels/"+th, map[string]any{"name": "renamed"})
	accepted(t, "rename", st, body)
	msgs := srv.Messages(th)
	if len(msgs) != 1 || msgs[0].Type != 4 || msgs[0].Content != "renamed" || msgs[0].Author.ID != bot.UserID {
		t.Errorf("a bot's rename left %+v in the thread, want one type 4 message", msgs)
	}
	st, body = call(t, srv, auth, "POST", "/channels/"+bot.ChannelID+"/messages/999/threads", map[string]any{"name": "t"})
	rejected(t, "thread from an unknown message", st, body, 404, 10008, "")

	// An archived thread takes no change but its unarchiving, not even
	// archiving again.
	st, body = call(t, srv, auth, "PATCH", "/channels/"+th, map[string]any{"archived": true})
	accepted(t, "archive", st, body)
	for name, b := range map[string]map[string]any{"archive again": {"archived": true}, "rename archived": {"name": "again"}, "lock archived": {"locked": true}} {
		st, body = call(t, srv, auth, "PATCH", "/channels/"+th, b)
		rejected(t, name, st, body, 400, 50083, "")
	}
	st, body = call(t, srv, auth, "PATCH", "/channels/"+th, map[string]any{"archived": false, "name": "back"})
	accepted(t, "unarchive", st, body)
	if c, _ := srv.Channel(th); c.Archived || c.Name != "back" {
		t.Errorf("after unarchiving: %+v", c)
	}
}

func cmd(name string, opts ...any) map[string]any {
	c := map[string]any{"name": name, "description": "does " + name, "type": 1}
	if opts != nil {
		c["options"] = opts
	}
	return c
}

func strOpt(name string, required bool, kv ...any) map[string]any {
	return with(map[string]any{"name": name, "description": "the " + name, "type": 3, "required": required}, kv...)
}

func TestCommandRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/applications/" + bot.UserID + "/guilds/" + bot.GuildID + "/commands"
	choice := func(name, value string) any { return map[string]any{"name": name, "value": value} }
	for _, c := range []struct {
		name string
		cmds []any
		path string
	}{
		{"uppercase", []any{cmd("Screen")}, "0.name"},
		{"space", []any{cmd("two words")}, "0.name"},
		{"33 chars", []any{cmd(strings.Repeat("a", 33))}, "0.name"},
		{"empty name", []any{cmd("")}, "0.name"},
		{"no description", []any{with(cmd("a"), "description", "")}, "0.description"},
		{"description 101", []any{with(cmd("a"), "description", strings.Repeat("x", 101))}, "0.description"},
		{"26 options", []any{cmd("a", many(26, func(i int) any { return strOpt(fmt.Sprint("o", i), false) })...)}, "0.options"},
		{"required after optional", []any{cmd("a", strOpt("x", false), strOpt("y", true))}, "0.options.1.required"},
		{"option name", []any{cmd("a", strOpt("Bad Name", false))}, "0.options.0.name"},
		{"option description", []any{cmd("a", strOpt("x", false, "description", ""))}, "0.options.0.description"},
		{"duplicate option", []any{cmd("a", strOpt("x", false), strOpt("x", false))}, "0.options.1.name"},
		{"26 choices", []any{cmd("a", strOpt("x", false, "choices", many(26, func(i int) any { return choice(fmt.Sprint(i), fmt.Sprint(i)) })))}, "0.options.0.choices"},
		{"choice name 101", []any{cmd("a", strOpt("x", false, "choices", []any{choice(strings.Repeat("n", 101), "v")}))}, "0.options.0.choices.0.name"},
		{"choice value 101", []any{cmd("a", strOpt("x", false, "choices", []any{choice("n", strings.Repeat("v", 101))}))}, "0.options.0.choices.0.value"},
		{"max_length 6001", []any{cmd("a", strOpt("x", false, "max_length", 6001))}, "0.options.0.max_length"},
		{"max_length 0", []any{cmd("a", strOpt("x", false, "max_length", 0))}, "0.options.0.max_length"},
		{"duplicate command", []any{cmd("a"), cmd("a")}, "1.name"},
		{"101 commands", many(101, func(i int) any { return cmd(fmt.Sprint("c", i)) }), "_root"},
		{"over 8000", []any{cmd("a", many(25, func(i int) any {
			return strOpt(fmt.Sprint("o", i), false, "description", strings.Repeat("d", 100), "choices",
				many(25, func(k int) any { return choice(fmt.Sprint(k, strings.Repeat("n", 10)), fmt.Sprint(k)) }))
		})...)}, "0"},
	} {
		st, body := call(t, srv, auth, "PUT", path, c.cmds)
		rejected(t, c.name, st, body, 400, 50035, c.path)
	}
	if got := srv.Commands(bot.GuildID); len(got) != 0 {
		t.Fatalf("rejected commands were registered: %v", got)
	}
	st, body := call(t, srv, auth, "PUT", path, []any{
		cmd("größe", strOpt("name", true, "max_length", 100), strOpt("why", false, "choices", []any{choice("a", "b")})),
		cmd("new-thread_2"),
	})
	if st != 200 || len(srv.Commands(bot.GuildID)) != 2 {
		t.Errorf("valid commands: %d %v", st, body)
	}
}

// respond posts an interaction callback.
func respond(t *testing.T, srv *Server, it *Interaction, body map[string]any) (int, map[string]any) {
	t.Helper()
	return call(t, srv, "", "POST", "/interactions/"+it.ID+"/"+it.Token+"/callback", body)
}

func textInput(id string, kv ...any) map[string]any {
	return with(map[string]any{"type": 4, "custom_id": id, "label": "Answer", "style": 1}, kv...)
}

func modal(kv ...any) map[string]any {
	return map[string]any{"type": 9, "data": with(map[string]any{"custom_id": "m", "title": "Title",
		"components": []any{row(textInput("t"))}}, kv...)}
}

func TestModalRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	owner := srv.NewUser("owner")
	srv.InteractionTTL = time.Minute
	auth := "Bot " + bot.Token
	_, card := call(t, srv, auth, "POST", "/channels/"+bot.ChannelID+"/messages", map[string]any{"content": "card", "components": []any{row(btn("b", "b"))}})
	it := srv.Click(card["id"].(string), "b", owner)
	rows := func(n int) []any { return many(n, func(i int) any { return row(textInput(fmt.Sprint("t", i))) }) }
	for _, c := range []struct {
		name string
		body map[string]any
		path string
	}{
		{"title 46", modal("title", strings.Repeat("x", 46)), "data.title"},
		{"no title", modal("title", nil), "data.title"},
		{"custom_id 101", modal("custom_id", strings.Repeat("x", 101)), "data.custom_id"},
		{"no components", modal("components", []any{}), "data.components"},
		{"6 components", modal("components", rows(6)), "data.components"},
		{"label 46", modal("components", []any{row(textInput("t", "label", strings.Repeat("x", 46)))}), "data.components.0.components.0.label"},
		{"no label", modal("components", []any{row(textInput("t", "label", nil))}), "data.components.0.components.0.label"},
		{"style 3", modal("components", []any{row(textInput("t", "style", 3))}), "data.components.0.components.0.style"},
		{"min_length 4001", modal("components", []any{row(textInput("t", "min_length", 4001))}), "data.components.0.components.0.min_length"},
		{"max_length 0", modal("components", []any{row(textInput("t", "max_length", 0))}), "data.components.0.components.0.max_length"},
		{"max_length 4001", modal("components", []any{row(textInput("t", "max_length", 4001))}), "data.components.0.components.0.max_length"},
		{"value 4001", modal("components", []any{row(textInput("t", "value", strings.Repeat("v", 4001)))}), "data.components.0.components.0.value"},
		{"value over max_length", modal("components", []any{row(textInput("t", "max_length", 5, "value", "123456"))}), "data.components.0.components.0.value"},
		{"placeholder 101", modal("components", []any{row(textInput("t", "placeholder", strings.Repeat("p", 101)))}), "data.components.0.components.0.placeholder"},
		{"button in a modal", modal("components", []any{row(btn("x", "x"))}), "data.components.0.components.0"},
		{"two inputs in a row", modal("components", []any{row(textInput("a"), textInput("b"))}), "data.components.0.components"},
		{"duplicate input ids", modal("components", []any{row(textInput("a")), row(textInput("a"))}), "data.components.1.components.0.custom_id"},
	} {
		st, body := respond(t, srv, it, c.body)
		rejected(t, c.name, st, body, 400, 50035, c.path)
	}
	if got, _ := srv.Interaction(it.Token); got.ResponseType != 0 || got.Modal != nil {
		t.Fatalf("a rejected modal acknowledged the interaction: %+v", got)
	}
	// The Label layout (type 18) and the limits themselves pass.
	label := map[string]any{"type": 18, "label": strings.Repeat("l", 45), "description": "d",
		"component": textInput("t", "label", nil, "style", 2, "min_length", 0, "max_length", 4000, "value", strings.Repeat("v", 4000), "placeholder", strings.Repeat("p", 100))}
	st, body := respond(t, srv, it, modal("title", strings.Repeat("x", 45), "components", []any{label}))
	accepted(t, "label modal", st, body)

	// A modal cannot answer a modal submit; an update (7) can, when the
	// modal came from a component's message.
	sub := srv.SubmitModal(it, owner, map[string]string{"t": "hi"})
	st, body = respond(t, srv, sub, modal())
	rejected(t, "modal to a modal submit", st, body, 400, 50035, "type")
	st, body = respond(t, srv, sub, map[string]any{"type": 7, "data": map[string]any{"content": "done", "components": []any{}}})
	accepted(t, "update after a modal", st, body)

	// Type 6 and 7 are for components only.
	st, body = call(t, srv, auth, "PUT", "/applications/"+bot.UserID+"/guilds/"+bot.GuildID+"/commands", []any{cmd("go")})
	accepted(t, "register /go", st, body)
	c := srv.Command(bot.ChannelID, "go", owner, nil)
	for _, typ := range []int{6, 7} {
		st, body := respond(t, srv, c, map[string]any{"type": typ, "data": map[string]any{"content": "x"}})
		rejected(t, fmt.Sprint("type ", typ, " to a command"), st, body, 400, 50035, "type")
	}
	st, body = respond(t, srv, c, map[string]any{"type": 4, "data": map[string]any{"content": ""}})
	rejected(t, "empty reply", st, body, 400, 50006, "")
	st, body = respond(t, srv, c, map[string]any{"type": 5})
	accepted(t, "defer", st, body)
}

func many(n int, f func(i int) any) []any {
	var out []any
	for i := range n {
		out = append(out, f(i))
	}
	return out
}

func TestInteractionTokenLifetime(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	call(t, srv, "Bot "+bot.Token, "PUT", "/applications/"+bot.UserID+"/guilds/"+bot.GuildID+"/commands", []any{cmd("go")})
	it := srv.Command(bot.ChannelID, "go", owner, nil)
	st, body := respond(t, srv, it, map[string]any{"type": 5})
	accepted(t, "defer", st, body)
	hook := "/webhooks/" + bot.UserID + "/" + it.Token
	srv.AgeInteraction(it, 14*time.Minute)
	st, body = call(t, srv, "", "PATCH", hook+"/messages/@original", map[string]any{"content": "at 14 min"})
	accepted(t, "edit at 14 minutes", st, body)
	st, body = call(t, srv, "", "POST", hook+"?wait=true", map[string]any{"content": "followup"})
	accepted(t, "followup at 14 minutes", st, body)
	fid := body["id"].(string)
	srv.AgeInteraction(it, 2*time.Minute)
	st, body = call(t, srv, "", "PATCH", hook+"/messages/@original", map[string]any{"content": "at 16 min"})
	rejected(t, "edit at 16 minutes", st, body, 401, 50027, "")
	st, body = call(t, srv, "", "POST", hook, map[string]any{"content": "late"})
	rejected(t, "followup at 16 minutes", st, body, 401, 50027, "")
	st, body = call(t, srv, "", "PATCH", hook+"/messages/"+fid, map[string]any{"content": "late"})
	rejected(t, "followup edit at 16 minutes", st, body, 401, 50027, "")
}

func TestOtherGuildIsMissingAccess(t *testing.T) {
	srv := New(t)
	a, b := srv.Main(), srv.NewBot("other")
	auth := "Bot " + a.Token
	_, m := call(t, srv, "Bot "+b.Token, "POST", "/channels/"+b.ChannelID+"/messages", map[string]any{"content": "b's"})
	for _, c := range []struct{ method, path string }{
		{"GET", "/channels/" + b.ChannelID},
		{"PATCH", "/channels/" + b.ChannelID},
		{"POST", "/channels/" + b.ChannelID + "/typing"},
		{"POST", "/channels/" + b.ChannelID + "/messages"},
		{"GET", "/channels/" + b.ChannelID + "/messages/" + m["id"].(string)},
		{"DELETE", "/channels/" + b.ChannelID + "/messages/" + m["id"].(string)},
		{"POST", "/channels/" + b.ChannelID + "/threads"},
	} {
		st, body := call(t, srv, auth, c.method, c.path, map[string]any{"content": "x", "name": "x", "type": 11})
		rejected(t, c.method+" "+c.path, st, body, 403, 50001, "")
	}
	if got, _ := srv.Message(m["id"].(string)); got.Deleted {
		t.Error("another guild's bot deleted the message")
	}
}
