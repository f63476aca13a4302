package claudehook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const userSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(npm test *)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "/home/u/bin/notify.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/home/u/bin/guard.sh"}]}]
  }
}`

func TestGlobalHooksInstallIdempotentAndUninstallCleanly(t *testing.T) {
	out, changed, err := AddGlobalHooks([]byte(userSettings), "/opt/bin/ccbridge-hook-stop", "/opt/bin/ccbridge-hook-pretool", 30*time.Minute)
	if err != nil || !changed {
		t.Fatalf("install: %v, changed=%v", err, changed)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	hooks := doc["hooks"].(map[string]any)
	if len(hooks) != 11 || doc["model"] != "opus" || !strings.Contains(string(out), "npm test") {
		t.Fatalf("installed document:\n%s", out)
	}
	if stop := hooks["Stop"].([]any); len(stop) != 2 || !strings.Contains(string(out), "'/opt/bin/ccbridge-hook-stop' --global") {
		t.Fatalf("Stop hooks: %v", stop)
	}
	again, changed, err := AddGlobalHooks(out, "/opt/bin/ccbridge-hook-stop", "/opt/bin/ccbridge-hook-pretool", 30*time.Minute)
	if err != nil || changed || string(again) != string(out) {
		t.Fatalf("second install changed the document (changed=%v, err=%v)", changed, err)
	}
	removed, changed, _, err := RemoveGlobalHooks(out, nil)
	if err != nil || !changed {
		t.Fatalf("uninstall: %v, %v", err, changed)
	}
	var back, orig map[string]any
	json.Unmarshal(removed, &back)
	json.Unmarshal([]byte(userSettings), &orig)
	b1, _ := json.Marshal(back)
	b2, _ := json.Marshal(orig)
	if string(b1) != string(b2) {
		t.Fatalf("uninstall did not restore the user's settings:\n%s\nwant\n%s", b1, b2)
	}
	if _, changed, _, _ := RemoveGlobalHooks(removed, nil); changed {
		t.Error("second uninstall changed something")
	}
}

func TestGlobalHooksOnEmptyAndBadFiles(t *testing.T) {
	out, changed, err := AddGlobalHooks(nil, "/b/ccbridge-hook-stop", "/b/ccbridge-hook-pretool", time.Minute)
	if err != nil || !changed || !strings.Contains(string(out), `"hooks"`) {
		t.Fatalf("empty file: %v %v %s", changed, err, out)
	}
	if _, _, err := AddGlobalHooks([]byte("{not json"), "a", "b", time.Minute); err == nil {
		t.Error("invalid JSON accepted")
	}
	if _, _, err := AddGlobalHooks([]byte(`{"hooks": []}`), "a", "b", time.Minute); err == nil {
		t.Error("hooks of the wrong type accepted")
	}
}

// A changed prompt_timeout is a change: the registered PermissionRequest
// hook takes the new timeout, in place, and doctor sees the stale one.
func TestGlobalHooksTakeANewPromptTimeout(t *testing.T) {
	old, _, err := AddGlobalHooks([]byte(userSettings), "/b/ccbridge-hook-stop", "/b/ccbridge-hook-pretool", 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	out, changed, err := AddGlobalHooks(old, "/b/ccbridge-hook-stop", "/b/ccbridge-hook-pretool", 10*time.Minute)
	if err != nil || !changed {
		t.Fatalf("new timeout: changed=%v, %v", changed, err)
	}
	var doc struct{ Hooks map[string][]HookMatcher }
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	perm := doc.Hooks[EventPermissionRequest]
	if len(perm) != 1 || len(perm[0].Hooks) != 1 || perm[0].Hooks[0].Timeout != int((10*time.Minute+permissionMargin).Seconds()) {
		t.Fatalf("PermissionRequest hooks: %+v", perm)
	}
	if _, changed, _ := AddGlobalHooks(out, "/b/ccbridge-hook-stop", "/b/ccbridge-hook-pretool", 10*time.Minute); changed {
		t.Error("the same timeout again is a change")
	}
}

// handFormatted is a settings file as a person writes it: keys in their
// own order, compact arrays, && in a command, a 20-digit integer, and
// hooks of their own.
const handFormatted = `{
    "model" : "opus",
    "permissions": { "allow": ["Bash(npm test *)", "Read"], "deny": [] },
    "env": {"BUILD": "make && make check", "SEED": 12345678901234567890},
    "hooks": {
        "Stop": [ {"hooks": [{"type": "command", "command": "notify.sh && beep"}]} ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "command", "command": "/home/u/bin/guard.sh"}
            ]}
        ]
    },
    "alwaysThinkingEnabled": true
}
`

// install-hooks then uninstall-hooks give the user's file back byte for
// byte (issue 20 item 3: keys were re-sorted, arrays exploded, && became
// \u0026\u0026 and large integers were rounded).
func TestGlobalHooksRoundTripIsByteIdentical(t *testing.T) {
	for _, doc := range []string{handFormatted, `{"model":"opus"}`, "{\n  \"hooks\": {}\n,  \"x\": [1,2]\n}", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]}}`} {
		out, changed, err := AddGlobalHooks([]byte(doc), "/opt/bin/ccbridge-hook-stop", "/opt/bin/ccbridge-hook-pretool", 30*time.Minute)
		if err != nil || !changed {
			t.Fatalf("install: %v, changed=%v", err, changed)
		}
		var parsed struct{ Hooks map[string][]HookMatcher }
		if err := json.Unmarshal(out, &parsed); err != nil || len(parsed.Hooks[EventPermissionRequest]) != 1 {
			t.Fatalf("installed document (%v):\n%s", err, out)
		}
		if strings.Contains(string(out), `\u0026`) || (doc == handFormatted && !strings.Contains(string(out), "12345678901234567890")) {
			t.Errorf("install rewrote the user's values:\n%s", out)
		}
		before := ShapeOf([]byte(doc))
		back, changed, empty, err := RemoveGlobalHooks(out, &before)
		if err != nil || !changed || empty {
			t.Fatalf("uninstall: %v, changed=%v, empty=%v", err, changed, empty)
		}
		if string(back) != doc {
			t.Errorf("uninstall did not give the file back:\n%s\nwant\n%s", back, doc)
		}
	}
}

// A document ccbridge created from nothing is empty again after
// uninstall, so the file can be removed.
func TestGlobalHooksOnNoFileLeaveNothing(t *testing.T) {
	out, _, err := AddGlobalHooks(nil, "/b/ccbridge-hook-stop", "/b/ccbridge-hook-pretool", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	back, changed, empty, err := RemoveGlobalHooks(out, nil)
	if err != nil || !changed || !empty {
		t.Fatalf("uninstall: %v, changed=%v, empty=%v: %s", err, changed, empty, back)
	}
}
