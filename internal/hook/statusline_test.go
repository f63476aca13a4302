package hook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// statusJSON is a statusLine input as 2.1.328 sends it (docs §7), with
// rate_limits as the binary's schema has them for claude.ai plans.
func statusJSON(cwd string, resetsAt int64) string {
	return `{"session_id":"sid-7","transcript_path":"/t.jsonl","cwd":"` + cwd + `","prompt_id":"p-3","effort":{"level":"medium"},
 "model":{"id":"claude-opus-5-5","display_name":"Opus 5.5"},
 "workspace":{"current_dir":"` + cwd + `","project_dir":"` + cwd + `","added_dirs":[]},
 "version":"2.1.328","output_style":{"name":"default"},
 "cost":{"total_cost_usd":0.2542,"total_duration_ms":408492,"total_api_duration_ms":953,"total_lines_added":5,"total_lines_removed":2},
 "context_window":{"total_input_tokens":4200,"total_output_tokens":40,"context_window_size":1000000,
   "current_usage":{"input_tokens":20000,"output_tokens":40,"cache_creation_input_tokens":100000,"cache_read_input_tokens":300000},
   "used_percentage":42,"remaining_percentage":58},
 "rate_limits":{"five_hour":{"used_percentage":45,"resets_at":` + itoa(resetsAt) + `},"seven_day":{"used_percentage":12.4,"resets_at":` + itoa(resetsAt+86400) + `}},
 "exceeds_200k_tokens":true,"fast_mode":false}`
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func runStatusLine(t *testing.T, root, home, input string) (string, string) {
	t.Helper()
	env := map[string]string{state.EnvRuntimeDir: root, state.EnvSession: "home-api", "HOME": home}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), Stop, []string{StatusLineArg}, strings.NewReader(input), &out, &errb, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("exit %d", code)
	}
	return out.String(), errb.String()
}

func TestStatusLineCachesAndPrints(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	cwd := t.TempDir()
	reset := time.Now().Add(2*time.Hour + 29*time.Minute + 30*time.Second).Unix()
	out, errs := runStatusLine(t, root, t.TempDir(), statusJSON(cwd, reset))
	if want := "Opus 5.5 · ctx 42% · $0.25 · 5h 45% (resets 2h30m) · 7d 12%\n"; out != want {
		t.Errorf("printed %q (stderr %q), want %q", out, errs, want)
	}
	d, err := state.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	statuses, _ := state.OpenStatuses(d)
	st, err := statuses.Get("sid-7")
	if err != nil {
		t.Fatal(err)
	}
	if st.Model != "Opus 5.5" || !st.HasContext || st.ContextPct != 42 || st.CostUSD != 0.2542 || st.LinesAdded != 5 || st.LinesRemoved != 2 ||
		st.SessionKey != "home-api" || st.PromptID != "p-3" || st.FiveHour == nil || st.FiveHour.UsedPct != 45 ||
		st.FiveHour.ResetsAt.Unix() != reset || st.SevenDay == nil || st.SevenDay.UsedPct != 12.4 {
		t.Errorf("cached %+v", st)
	}
}

func TestStatusLineWithoutPlanLimits(t *testing.T) {
	// An API key: no rate_limits; a fresh session: no usage yet.
	in := `{"session_id":"sid-8","cwd":"/p","model":{"id":"claude-sonnet-5-5","display_name":"Sonnet 5.5"},"cost":{"total_cost_usd":0},"context_window":{"context_window_size":200000,"current_usage":null,"used_percentage":null}}`
	out, _ := runStatusLine(t, filepath.Join(t.TempDir(), "rt"), t.TempDir(), in)
	if out != "Sonnet 5.5\n" {
		t.Errorf("printed %q", out)
	}
}

func TestStatusLineRunsTheUsersOwn(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	home, proj := t.TempDir(), t.TempDir()
	got := filepath.Join(t.TempDir(), "stdin.json")
	script := filepath.Join(t.TempDir(), "mine.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat > '"+got+"'\necho \"MINE in $(pwd)\"\n"), 0o755)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"`+script+`"}}`), 0o600)
	input := statusJSON(proj, time.Now().Add(time.Hour).Unix())
	out, errs := runStatusLine(t, root, home, input)
	if out != "MINE in "+proj+"\n" {
		t.Errorf("printed %q (stderr %q); want the user's statusLine output", out, errs)
	}
	if b, _ := os.ReadFile(got); string(b) != input {
		t.Errorf("the user's statusLine got %q, want the same input", b)
	}
	// The project's settings win over the user's; ccbridge's own entry is
	// never run as "theirs". (Settings are read once per session: each
	// case is a new session.)
	os.MkdirAll(filepath.Join(proj, ".claude"), 0o700)
	os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"echo PROJECT"}}`), 0o600)
	if out, _ := runStatusLine(t, root, home, strings.Replace(input, "sid-7", "sid-71", 1)); out != "PROJECT\n" {
		t.Errorf("printed %q, want the project's statusLine", out)
	}
	os.WriteFile(filepath.Join(proj, ".claude", "settings.local.json"), []byte(`{"statusLine":{"type":"command","command":"'/usr/bin/ccbridge-hook-stop' statusline"}}`), 0o600)
	if out, _ := runStatusLine(t, root, home, strings.Replace(input, "sid-7", "sid-72", 1)); out != "PROJECT\n" {
		t.Errorf("printed %q; ccbridge's own statusLine must be skipped", out)
	}
}

// security-2 finding 20: the statusLine a session runs is chosen once, by
// the settings of the project Claude names, never by the cwd (a cd into a
// cloned repository), and a settings file written later changes nothing.
func TestStatusLineIgnoresTheCwdAndLaterSettings(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	home, cwd := t.TempDir(), t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	os.MkdirAll(filepath.Join(cwd, ".claude"), 0o700)
	os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"touch '`+ran+`'; echo CWD"}}`), 0o600)
	noProject := strings.Replace(statusJSON(cwd, 0), `"project_dir":"`+cwd+`"`, `"project_dir":""`, 1)
	out, _ := runStatusLine(t, root, home, noProject)
	if _, err := os.Stat(ran); err == nil || strings.Contains(out, "CWD") {
		t.Fatalf("the cwd's statusLine ran (printed %q)", out)
	}
	if !strings.HasPrefix(out, "Opus 5.5 · ctx 42%") {
		t.Errorf("printed %q, want ccbridge's line", out)
	}
	// The project had no statusLine when the session began: one added
	// since does not run either, in this session.
	proj := t.TempDir()
	withProject := statusJSON(proj, 0)
	runStatusLine(t, root, home, strings.Replace(withProject, "sid-7", "sid-9", 1))
	os.MkdirAll(filepath.Join(proj, ".claude"), 0o700)
	os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"touch '`+ran+`'; echo LATER"}}`), 0o600)
	out, _ = runStatusLine(t, root, home, strings.Replace(withProject, "sid-7", "sid-9", 1))
	if _, err := os.Stat(ran); err == nil || strings.Contains(out, "LATER") {
		t.Fatalf("a statusLine written mid-session ran (printed %q)", out)
	}
}

func TestStatusLineUserCommandIsBounded(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"echo early; sleep 60"}}`), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var out, errb bytes.Buffer
	env := map[string]string{state.EnvRuntimeDir: filepath.Join(t.TempDir(), "rt"), "HOME": home}
	StatusLine(ctx, strings.NewReader(statusJSON(t.TempDir(), 0)), &out, &errb, func(k string) string { return env[k] })
	if time.Since(start) > 10*time.Second || out.String() != "early\n" {
		t.Errorf("took %s, printed %q", time.Since(start), out.String())
	}
}

func TestUntilText(t *testing.T) {
	for d, want := range map[time.Duration]string{90 * time.Second: "2m", 2*time.Hour + 30*time.Minute: "2h30m", 3 * time.Hour: "3h", 50 * time.Hour: "2d2h"} {
		if got := untilText(d); got != want {
			t.Errorf("untilText(%s) = %q, want %q", d, got, want)
		}
	}
}
