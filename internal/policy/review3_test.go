package policy

import (
	"encoding/json"
	"testing"
)

// The third security review's finding 10: the long options of the
// wrappers the matcher sees through, env's split string, git aliases made
// on the command line and rm's abbreviated long options get the rule's
// verdict (an ask where git runs an alias it cannot see); the short forms
// and the controls stay as they were.
func TestReview3WrapperLongOptions(t *testing.T) {
	set, err := New(nil, []string{"Bash(git push *)", "Bash(rm -rf *)"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ cmd, want string }{
		{"nice --adjustment 5 git push origin main", "deny"},
		{"nice --adjustment=5 git push origin main", "deny"},
		{"nice --adj 5 git push origin main", "deny"},
		{"sudo --user root git push origin main", "deny"},
		{"sudo --user=root --group wheel git push", "deny"},
		{"sudo -Eu root git push", "deny"},
		{"sudo --chdir /tmp -- git push", "deny"},
		{"timeout --kill-after 5 30 git push origin main", "deny"},
		{"timeout --signal KILL 30 git push origin main", "deny"},
		{"timeout -s KILL -k 5 30 git push", "deny"},
		{"env --unset HOME git push origin main", "deny"},
		{"env --chdir /tmp git push origin main", "deny"},
		{"env -u HOME -C /tmp git push", "deny"},
		{"env -S 'git push origin main'", "deny"},
		{"env --split-string='git push origin main'", "deny"},
		{"env --split-string 'GIT_TRACE=1 git push'", "deny"},
		{"env -iS'git push origin main'", "deny"},
		{"env -S '-u HOME git push' --force", "deny"},
		{"env --s 'git push'", "deny"},
		{"stdbuf --output L git push", "deny"},
		{"ionice --class 3 git push", "deny"},
		{"taskset 0x3 git push", "deny"},
		{"git -c alias.p=push p origin main", "ask"},
		{"git -c Alias.p=push p origin main", "ask"},
		{"git -c 'core.pager=!git push' log", "ask"},
		{"git --config-env=alias.p=P p", "ask"},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p", "ask"},
		{"rm --recur --force build", "deny"},
		{"rm --rec --f build", "deny"},
		{"rm --force --recursive --verb build", "deny"},
		// The short forms, as before.
		{"nice -n 5 git push", "deny"},
		{"sudo -u root git push", "deny"},
		{"timeout -k 5 30 git push", "deny"},
		{"rm -rf build", "deny"},
		// Controls.
		{"nice --adjustment 5 git status", ""},
		{"env -S 'git status'", ""},
		{"git -c color.ui=never push", "deny"},
		{"git -c color.ui=never status", ""},
		{"rm --recur build", ""},
		{"rm --interactive=never --force build", ""},
		{"timeout --signal KILL 30 make test", ""},
	}
	for _, c := range cases {
		in, _ := json.Marshal(map[string]any{"command": c.cmd})
		if v := set.Check(Call{Tool: "Bash", Input: in, Cwd: t.TempDir()}); v.Decision != c.want {
			t.Errorf("%s: %+v, want %q", c.cmd, v, c.want)
		}
	}
}
