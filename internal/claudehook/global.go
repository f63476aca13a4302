package claudehook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// GlobalFlag is added to hook commands registered in the user's own
// settings. Claude Code merges those with a session's --settings hooks, so
// in a pane ccbridge started (CCBRIDGE_SESSION set) the global copy steps
// aside and the event is handled once.
const GlobalFlag = "--global"

func isOurGlobal(command string) bool {
	return strings.HasSuffix(command, " "+GlobalFlag) && strings.Contains(command, "ccbridge-hook-")
}

// The settings file is the user's: it is edited in place, as raw JSON, and
// never decoded and encoded again. Keys keep their order, arrays their
// layout, strings their escapes and numbers their digits, and removing
// ccbridge's hooks gives back the bytes there were before they were added.

// AddGlobalHooks registers ccbridge's hooks in a Claude Code settings
// document (the contents of ~/.claude/settings.json; empty = none yet),
// keeping every other key and hook. changed is false when they were all
// registered already.
func AddGlobalHooks(doc []byte, stopBin, pretoolBin string, promptTimeout time.Duration) (out []byte, changed bool, err error) {
	bom, doc, tail := cutEdges(doc)
	fresh := len(doc) == 0
	defer func() {
		if err == nil && !fresh {
			out = joinEdges(bom, out, tail)
		}
	}()
	if fresh {
		doc = []byte("{}")
	}
	if err := checkSettings(doc); err != nil {
		return nil, false, err
	}
	if fresh {
		// A file of ccbridge's own is laid out for reading.
		defer func() {
			var b bytes.Buffer
			if err == nil && json.Indent(&b, out, "", "  ") == nil {
				out = append(b.Bytes(), '\n')
			}
		}()
	}
	out = doc
	want := BridgeSettings(stopBin, pretoolBin, promptTimeout)
	for _, event := range slices.Sorted(maps.Keys(want.Hooks)) {
		for _, m := range want.Hooks[event] {
			for i := range m.Hooks {
				m.Hooks[i].Command += " " + GlobalFlag
			}
			var found, updated bool
			if out, found, updated, err = syncCommand(out, event, m.Hooks[0]); err != nil {
				return nil, false, err
			}
			changed = changed || updated
			if found {
				continue
			}
			if out, err = appendMatcher(out, event, m); err != nil {
				return nil, false, err
			}
			changed = true
		}
	}
	return out, changed, nil
}

// appendMatcher adds a matcher at the end of an event's list, creating the
// list (and the hooks object) when there is none.
func appendMatcher(doc []byte, event string, m HookMatcher) ([]byte, error) {
	raw, err := compact(m)
	if err != nil {
		return nil, err
	}
	path, value := "hooks."+event+".-1", raw
	switch {
	case !gjson.GetBytes(doc, "hooks").Exists():
		path, value = "hooks", `{"`+event+`":[`+raw+`]}`
	case !gjson.GetBytes(doc, "hooks."+event).Exists():
		path, value = "hooks."+event, "["+raw+"]"
	case !gjson.GetBytes(doc, "hooks."+event).IsArray():
		return nil, fmt.Errorf("settings file: hooks.%s is not a list", event)
	}
	out, err := sjson.SetRawBytes(doc, path, []byte(value))
	if err != nil {
		return nil, fmt.Errorf("settings file: add hooks.%s: %w", event, err)
	}
	return out, nil
}

// compact encodes v on one line, leaving & < > as they are.
func compact(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// Shape is what a settings document held of hooks before install-hooks
// added ccbridge's: whether it had a hooks object, and the events listed
// in it. Uninstall keeps those, even when they are left empty, so that the
// user's "hooks": {} or "Notification": [] come back byte for byte.
type Shape struct {
	Hooks  bool     `json:"hooks"`
	Events []string `json:"events,omitempty"`
}

// ShapeOf returns the Shape of a settings document (the zero Shape for
// none, or for one that is not JSON).
func ShapeOf(doc []byte) Shape {
	_, doc = cutBOM(doc)
	var sh Shape
	hooks := gjson.GetBytes(doc, "hooks")
	if !gjson.ValidBytes(doc) || !hooks.IsObject() {
		return sh
	}
	sh.Hooks = true
	hooks.ForEach(func(event, _ gjson.Result) bool {
		sh.Events = append(sh.Events, event.String())
		return true
	})
	return sh
}

// cutBOM splits off a UTF-8 byte-order mark: Claude Code reads a settings
// file that starts with one (2.1.328), so ccbridge edits the JSON after it
// and puts it back.
func cutBOM(doc []byte) (bom, rest []byte) {
	if b, ok := bytes.CutPrefix(doc, []byte("\uFEFF")); ok {
		return []byte("\uFEFF"), b
	}
	return nil, doc
}

// cutEdges splits a document into its byte-order mark, its JSON, and the
// white space after it, which the edits keep as they were (sjson drops
// what follows the object when it deletes the object's last key).
func cutEdges(doc []byte) (bom, body, tail []byte) {
	bom, body = cutBOM(doc)
	trimmed := bytes.TrimRight(body, " \t\r\n")
	return bom, trimmed, body[len(trimmed):]
}

// joinEdges puts the edges back around an edited body.
func joinEdges(bom, body, tail []byte) []byte {
	return slices.Concat(bom, body, tail)
}

// RemoveGlobalHooks removes ccbridge's global hooks and nothing else: a
// matcher that held only ccbridge's hooks goes, and so does an event list
// (or the hooks object) that it leaves empty, unless before (the document's
// Shape before install; nil when unknown) says the user had it. empty
// reports that the document is left with no key at all, so that a file
// ccbridge created can be removed rather than left as {}.
func RemoveGlobalHooks(doc []byte, before *Shape) (out []byte, changed, empty bool, err error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return doc, false, true, nil
	}
	bom, doc, tail := cutEdges(doc)
	defer func() {
		if err == nil {
			out = joinEdges(bom, out, tail)
		}
	}()
	if err := checkSettings(doc); err != nil {
		return nil, false, false, err
	}
	if before == nil {
		before = &Shape{}
	}
	out = doc
	hooks := gjson.GetBytes(doc, "hooks")
	removedEvents, events := 0, 0
	hooks.ForEach(func(event, list gjson.Result) bool {
		events++
		if !list.IsArray() {
			return true
		}
		entries := list.Array()
		// Deletions, last first, so earlier indices stay valid.
		var paths []string
		left := len(entries)
		for i, entry := range entries {
			inner := entry.Get("hooks").Array()
			var ours []int
			for j, h := range inner {
				if isOurGlobal(h.Get("command").String()) {
					ours = append(ours, j)
				}
			}
			switch {
			case len(ours) == 0:
			case len(ours) == len(inner):
				paths = append(paths, fmt.Sprintf("hooks.%s.%d", escapeKey(event.String()), i))
				left--
			default:
				for _, j := range ours {
					paths = append(paths, fmt.Sprintf("hooks.%s.%d.hooks.%d", escapeKey(event.String()), i, j))
				}
			}
		}
		if len(paths) == 0 {
			return true
		}
		changed = true
		if left == 0 && !slices.Contains(before.Events, event.String()) {
			removedEvents++
			paths = []string{"hooks." + escapeKey(event.String())}
		}
		slices.Reverse(paths)
		for _, p := range paths {
			if out, err = sjson.DeleteBytes(out, p); err != nil {
				err = fmt.Errorf("settings file: remove %s: %w", p, err)
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, false, false, err
	}
	if changed && removedEvents == events && !before.Hooks {
		if out, err = sjson.DeleteBytes(out, "hooks"); err != nil {
			return nil, false, false, fmt.Errorf("settings file: remove hooks: %w", err)
		}
	}
	empty = len(gjson.ParseBytes(out).Map()) == 0
	return out, changed, empty, nil
}

// escapeKey escapes the characters that a gjson/sjson path gives meaning.
func escapeKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		if strings.ContainsRune(`.*?|#@\!=<>%`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkSettings refuses a document that is not a JSON object, or whose
// hooks are not an object, saying where and why.
func checkSettings(doc []byte) error {
	if !gjson.ValidBytes(doc) {
		return notJSON(doc)
	}
	if v := gjson.ParseBytes(doc); !v.IsObject() {
		kind := map[gjson.Type]string{gjson.String: "string", gjson.Number: "number", gjson.True: "boolean", gjson.False: "boolean", gjson.Null: "null"}[v.Type]
		if v.IsArray() {
			kind = "array"
		}
		return fmt.Errorf("settings file holds a JSON %s, not an object", kind)
	}
	if h := gjson.GetBytes(doc, "hooks"); h.Exists() && !h.IsObject() {
		return fmt.Errorf("settings file: \"hooks\" is not an object")
	}
	return nil
}

// syncCommand finds the hooks of an event that run want's command and
// gives them want's timeout and async, so that a changed prompt_timeout
// reaches hand-started sessions. found is false when none runs it.
func syncCommand(doc []byte, event string, want HookCommand) (out []byte, found, changed bool, err error) {
	out = doc
	for i, entry := range gjson.GetBytes(doc, "hooks."+escapeKey(event)).Array() {
		for j, h := range entry.Get("hooks").Array() {
			if h.Get("command").String() != want.Command {
				continue
			}
			found = true
			at := fmt.Sprintf("hooks.%s.%d.hooks.%d.", escapeKey(event), i, j)
			if h.Get("timeout").Int() != int64(want.Timeout) {
				changed = true
				if want.Timeout == 0 {
					out, err = sjson.DeleteBytes(out, at+"timeout")
				} else {
					out, err = sjson.SetRawBytes(out, at+"timeout", []byte(strconv.Itoa(want.Timeout)))
				}
			}
			if err == nil {
				if h.Get("async").Bool() != want.Async {
					changed = true
					if !want.Async {
						out, err = sjson.DeleteBytes(out, at+"async")
					} else {
						out, err = sjson.SetRawBytes(out, at+"async", []byte("true"))
					}
				}
			}
			if err != nil {
				return nil, false, false, fmt.Errorf("settings file: update hooks.%s: %w", event, err)
			}
		}
	}
	return out, found, changed, nil
}

// notJSON says where a document stops being JSON (line and column, from
// 1) and why; comments get a word of their own, as a hand-edited file
// often has them and Claude Code does not read such a file either.
func notJSON(doc []byte) error {
	var v any
	err := json.Unmarshal(doc, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("settings file is not valid JSON: %v", err)
	}
	at := int(se.Offset) - 1 // the offending byte
	if at < 0 {
		at = 0
	}
	if at > len(doc) {
		at = len(doc)
	}
	line := 1 + bytes.Count(doc[:at], []byte("\n"))
	col := 1 + utf8.RuneCount(doc[bytes.LastIndexByte(doc[:at], '\n')+1:at])
	cause := se.Error()
	if rest := doc[at:]; bytes.HasPrefix(rest, []byte("//")) || bytes.HasPrefix(rest, []byte("/*")) {
		cause = "comments are not JSON (Claude Code ignores a settings file that has them): remove them"
	}
	return fmt.Errorf("settings file is not valid JSON: line %d, column %d: %s", line, col, cause)
}
