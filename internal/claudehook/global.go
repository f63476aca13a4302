package claudehook

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// GlobalFlag is added to hook commands registered in the user's own
// settings. Claude Code merges those with a session's --settings hooks, so
// in a pane ccbridge started (CCBRIDGE_SESSION set) the global copy steps
// aside and the event is handled once.
const GlobalFlag = "--global"

func isOurGlobal(command string) bool {
	return strings.HasSuffix(command, " "+GlobalFlag) && strings.Contains(command, "ccbridge-hook-")
}

// AddGlobalHooks registers ccbridge's hooks in a Claude Code settings
// document (the contents of ~/.claude/settings.json; empty = none yet),
// keeping every other key and hook. changed is false when they were all
// registered already.
func AddGlobalHooks(doc []byte, stopBin, pretoolBin string, promptTimeout time.Duration) (out []byte, changed bool, err error) {
	root, hooks, err := parseSettings(doc)
	if err != nil {
		return nil, false, err
	}
	want := BridgeSettings(stopBin, pretoolBin, promptTimeout)
	for _, event := range slices.Sorted(maps.Keys(want.Hooks)) {
		list, _ := hooks[event].([]any)
		for _, m := range want.Hooks[event] {
			for i := range m.Hooks {
				m.Hooks[i].Command += " " + GlobalFlag
			}
			if found, updated := syncCommand(list, m.Hooks[0]); found {
				changed = changed || updated
				continue
			}
			var entry any
			b, _ := json.Marshal(m)
			_ = json.Unmarshal(b, &entry)
			list = append(list, entry)
			changed = true
		}
		hooks[event] = list
	}
	root["hooks"] = hooks
	out, err = json.MarshalIndent(root, "", "  ")
	return append(out, '\n'), changed, err
}

// RemoveGlobalHooks removes ccbridge's global hooks and nothing else.
func RemoveGlobalHooks(doc []byte) (out []byte, changed bool, err error) {
	root, hooks, err := parseSettings(doc)
	if err != nil {
		return nil, false, err
	}
	for event, v := range hooks {
		list, _ := v.([]any)
		var kept []any
		for _, entry := range list {
			em, ok := entry.(map[string]any)
			inner, _ := em["hooks"].([]any)
			var innerKept []any
			for _, h := range inner {
				hm, _ := h.(map[string]any)
				if c, _ := hm["command"].(string); isOurGlobal(c) {
					changed = true
					continue
				}
				innerKept = append(innerKept, h)
			}
			if ok && len(inner) > 0 && len(innerKept) == 0 {
				continue // the matcher held only our hooks
			}
			if ok {
				em["hooks"] = innerKept
			}
			kept = append(kept, entry)
		}
		if len(kept) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = kept
		}
	}
	if len(hooks) == 0 {
		delete(root, "hooks")
	} else {
		root["hooks"] = hooks
	}
	out, err = json.MarshalIndent(root, "", "  ")
	return append(out, '\n'), changed, err
}

func parseSettings(doc []byte) (root, hooks map[string]any, err error) {
	root = map[string]any{}
	if len(strings.TrimSpace(string(doc))) > 0 {
		if err := json.Unmarshal(doc, &root); err != nil {
			return nil, nil, fmt.Errorf("settings file is not valid JSON: %w", err)
		}
	}
	hooks = map[string]any{}
	if h, ok := root["hooks"]; ok {
		if hooks, ok = h.(map[string]any); !ok {
			return nil, nil, fmt.Errorf("settings file: \"hooks\" is not an object")
		}
	}
	return root, hooks, nil
}

// syncCommand finds the hooks in list that run want's command and gives
// them want's timeout and async, so that a changed prompt_timeout reaches
// hand-started sessions. found is false when none runs it.
func syncCommand(list []any, want HookCommand) (found, changed bool) {
	for _, entry := range list {
		em, _ := entry.(map[string]any)
		inner, _ := em["hooks"].([]any)
		for _, h := range inner {
			hm, _ := h.(map[string]any)
			if hm == nil || hm["command"] != want.Command {
				continue
			}
			found = true
			if t, _ := hm["timeout"].(float64); t != float64(want.Timeout) {
				hm["timeout"], changed = want.Timeout, true
				if want.Timeout == 0 {
					delete(hm, "timeout")
				}
			}
			if a, _ := hm["async"].(bool); a != want.Async {
				hm["async"], changed = want.Async, true
				if !want.Async {
					delete(hm, "async")
				}
			}
		}
	}
	return found, changed
}
