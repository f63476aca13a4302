package claudehook

import (
	"strings"
	"testing"
	"time"
)

func roundTrip(t *testing.T, doc string) string {
	t.Helper()
	before := ShapeOf([]byte(doc))
	out, changed, err := AddGlobalHooks([]byte(doc), "/opt/bin/ccbridge-hook-stop", "/opt/bin/ccbridge-hook-pretool", 30*time.Minute)
	if err != nil || !changed {
		t.Fatalf("install %q: %v, changed=%v", doc, err, changed)
	}
	back, changed, _, err := RemoveGlobalHooks(out, &before)
	if err != nil || !changed {
		t.Fatalf("uninstall %q: %v, changed=%v", doc, err, changed)
	}
	return string(back)
}

// Empty event lists and an empty hooks object the user had survive
// install and uninstall byte for byte (first contact 2, §11).
func TestGlobalHooksKeepTheUsersEmptyLists(t *testing.T) {
	for _, doc := range []string{
		`  {  "a": [ ] , "b" : { } , "hooks" : { "Notification" : [ ] }  }`,
		`{"hooks": {}}`,
		"{\n  \"hooks\": {}\n,  \"x\": [1,2]\n}",
		`{"hooks": {"Stop": [], "PreToolUse": [ ]}, "model": "opus"}`,
	} {
		if back := roundTrip(t, doc); back != doc {
			t.Errorf("round trip:\n%s\nwant\n%s", back, doc)
		}
	}
}

// Claude Code reads a settings file that starts with a byte-order mark
// (checked on 2.1.328), so ccbridge edits it too and keeps the mark.
func TestGlobalHooksKeepAByteOrderMark(t *testing.T) {
	doc := "\uFEFF{\"model\": \"opus\"}\n"
	out, _, err := AddGlobalHooks([]byte(doc), "/b/ccbridge-hook-stop", "/b/ccbridge-hook-pretool", time.Minute)
	if err != nil || !strings.HasPrefix(string(out), "\uFEFF{\"model\": \"opus\"") || !strings.Contains(string(out), "ccbridge-hook-stop") {
		t.Fatalf("install: %v\n%q", err, out)
	}
	if back := roundTrip(t, doc); back != doc {
		t.Errorf("round trip: %q", back)
	}
	if s := ShapeOf([]byte("\uFEFF{\"hooks\": {\"Stop\": []}}")); !s.Hooks || len(s.Events) != 1 {
		t.Errorf("shape behind a BOM: %+v", s)
	}
}

// A file that is not JSON is refused with the line, the column and the
// cause: Claude Code itself ignores a settings file with comments.
func TestGlobalHooksSayWhereAndWhyAFileIsNotJSON(t *testing.T) {
	for doc, want := range map[string]string{
		"{\n  // my settings\n  \"model\": \"opus\"\n}": "line 2, column 3: comments are not JSON",
		"{\n  \"a\": 1 /* c */\n}":                      "line 2, column 10: comments are not JSON",
		"{\n  \"a\": 1,\n}":                             "line 3, column 1: ",
		"[1, 2]":                                        "holds a JSON array, not an object",
	} {
		_, _, err := AddGlobalHooks([]byte(doc), "a", "b", time.Minute)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", doc, err, want)
		}
		if _, _, _, err := RemoveGlobalHooks([]byte(doc), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("remove %q: %v; want %q", doc, err, want)
		}
	}
}
