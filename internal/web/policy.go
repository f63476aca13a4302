package web

import (
	"encoding/json"

	"github.com/ccbridge/ccbridge/internal/policy"
)

// PolicyReadDenied adapts a session's [policy] to Options.ReadDenied: a
// path is denied when a Read of it would be (the same rules the PreToolUse
// hook enforces on Claude). rules returns the session's rules; home is the
// user's home folder, for rules written with ~.
func PolicyReadDenied(rules func(Session) policy.Set, home string) func(Session, string) bool {
	return func(s Session, path string) bool {
		in, _ := json.Marshal(map[string]string{"file_path": path})
		return rules(s).Check(policy.Call{Tool: "Read", Input: in, Cwd: s.Dir, Home: home}).Decision == "deny"
	}
}
