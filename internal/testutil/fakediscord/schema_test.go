package fakediscord

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// recordingTB keeps the failures the fake reports instead of failing the test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// Bodies no hand-written rule looks at, refused by Discord's own schema: the
// fake answers 400 50035 at the field, and the test that sent them fails.
func TestSchemaRefusesWhatDiscordRefuses(t *testing.T) {
	rec := &recordingTB{TB: t}
	srv := New(rec)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	msgs := "/channels/" + bot.ChannelID + "/messages"
	for _, c := range []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"tts not a boolean", "POST", msgs, map[string]any{"content": "x", "tts": "yes"}, "tts"},
		{"four stickers", "POST", msgs, map[string]any{"content": "x", "sticker_ids": []string{"1", "2", "3", "4"}}, "sticker_ids"},
		{"a sticker id that is no snowflake", "POST", msgs, map[string]any{"content": "x", "sticker_ids": []string{"abc"}}, "sticker_ids.0"},
		{"embed title 257", "POST", msgs, map[string]any{"embeds": []any{map[string]any{"title": strings.Repeat("t", 257)}}}, "embeds.0.title"},
		{"button style 9", "POST", msgs, map[string]any{"content": "x", "components": []any{row(map[string]any{"type": 2, "style": 9, "label": "a", "custom_id": "a"})}}, "components.0.components.0.style"},
		{"a component of no kind", "POST", msgs, map[string]any{"content": "x", "components": []any{row(map[string]any{"type": 99, "custom_id": "a"})}}, "components.0.components.0"},
		{"a command of no kind", "PUT", "/applications/" + bot.UserID + "/guilds/" + bot.GuildID + "/commands", []any{map[string]any{"name": "x", "description": "d", "type": 99}}, "0.type"},
	} {
		before := len(rec.failures())
		st, body := call(t, srv, auth, c.method, c.path, c.body)
		rejected(t, c.name, st, body, 400, 50035, c.field)
		if got := rec.failures(); len(got) != before+1 || !strings.Contains(got[len(got)-1], "Discord would refuse") {
			t.Errorf("%s: the test was not failed: %q", c.name, got[before:])
		}
	}
	// What Discord takes passes, permission bitfields as strings included.
	before := len(rec.failures())
	st, body := call(t, srv, auth, "POST", msgs, map[string]any{"content": "ok", "tts": false, "nonce": "n1", "allowed_mentions": map[string]any{"parse": []any{}}})
	accepted(t, "a plain message", st, body)
	if got := rec.failures(); len(got) != before {
		t.Errorf("a valid body failed the test: %q", got[before:])
	}
	// A test that means to send such bodies sees the refusal without failing.
	srv.InvalidBodiesExpected.Store(true)
	st, body = call(t, srv, auth, "POST", msgs, map[string]any{"content": "x", "tts": "yes"})
	rejected(t, "expected refusal", st, body, 400, 50035, "tts")
	if got := rec.failures(); len(got) != before {
		t.Errorf("an expected refusal failed the test: %q", got[before:])
	}
}

func TestPermissionStringsPassTheSchema(t *testing.T) {
	inst := map[string]any{"permission_overwrites": []any{map[string]any{"id": "1", "type": 0, "allow": "1024", "deny": "0"}}, "default_member_permissions": "8"}
	permissionsAsIntegers(inst, "")
	ow := inst["permission_overwrites"].([]any)[0].(map[string]any)
	if fmt.Sprintf("%T %v", ow["allow"], ow["allow"]) != "json.Number 1024" || fmt.Sprintf("%T", inst["default_member_permissions"]) != "json.Number" {
		t.Errorf("not turned into integers: %#v", inst)
	}
}

func BenchmarkSchemaCheck(b *testing.B) {
	o, err := spec()
	if err != nil {
		b.Fatal(err)
	}
	seg := []string{"channels", "1", "messages"}
	sch, err := o.schemaFor("POST", seg)
	if err != nil || sch == nil {
		b.Fatal(sch, err)
	}
	inst := map[string]any{"content": strings.Repeat("x", 1500), "components": []any{row(map[string]any{"type": 2, "style": 1, "label": "a", "custom_id": "a"})}}
	b.ResetTimer()
	for b.Loop() {
		if err := sch.Validate(inst); err != nil {
			b.Fatal(err)
		}
	}
}
