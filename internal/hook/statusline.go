package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// StatusLineArg is the argument that makes ccbridge-hook-stop Claude's
// statusLine command: `ccbridge-hook-stop statusline`.
const StatusLineArg = "statusline"

// statusInput is the part of Claude Code's statusLine input ccbridge uses
// (docs claude-code-protocol.md §7; rate_limits from the binary's schema).
type statusInput struct {
	SessionID string `json:"session_id"`
	PromptID  string `json:"prompt_id"`
	Cwd       string `json:"cwd"`
	Model     struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string `json:"current_dir"`
		ProjectDir string `json:"project_dir"`
	} `json:"workspace"`
	Cost struct {
		TotalCostUSD      float64 `json:"total_cost_usd"`
		TotalLinesAdded   int     `json:"total_lines_added"`
		TotalLinesRemoved int     `json:"total_lines_removed"`
	} `json:"cost"`
	ContextWindow struct {
		ContextWindowSize int64 `json:"context_window_size"`
		CurrentUsage      *struct {
			InputTokens              int64 `json:"input_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		} `json:"current_usage"`
		UsedPercentage *float64 `json:"used_percentage"`
	} `json:"context_window"`
	RateLimits *struct {
		FiveHour *rateLimit `json:"five_hour"`
		SevenDay *rateLimit `json:"seven_day"`
	} `json:"rate_limits"`
}

type rateLimit struct {
	UsedPercentage *float64 `json:"used_percentage"`
	ResetsAt       *float64 `json:"resets_at"` // unix seconds
}

func (r *rateLimit) limit() *state.Limit {
	if r == nil || r.UsedPercentage == nil {
		return nil
	}
	l := &state.Limit{UsedPct: *r.UsedPercentage}
	if r.ResetsAt != nil && *r.ResetsAt > 0 {
		l.ResetsAt = time.Unix(int64(*r.ResetsAt), 0).UTC()
	}
	return l
}

// status turns the input into the cached record.
func (in *statusInput) status(sessionKey string, now time.Time) state.Status {
	s := state.Status{SessionKey: sessionKey, Cwd: in.Cwd, PromptID: in.PromptID, Model: in.Model.DisplayName, ModelID: in.Model.ID,
		CostUSD: in.Cost.TotalCostUSD, LinesAdded: in.Cost.TotalLinesAdded, LinesRemoved: in.Cost.TotalLinesRemoved, At: now.UTC()}
	if s.Model == "" {
		s.Model = in.Model.ID
	}
	cw := in.ContextWindow
	s.ContextSize = cw.ContextWindowSize
	// The usage of the last request gives the share exactly; Claude's own
	// used_percentage is rounded to a whole percent.
	if u := cw.CurrentUsage; u != nil && cw.ContextWindowSize > 0 {
		s.ContextPct = 100 * float64(u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens) / float64(cw.ContextWindowSize)
		s.HasContext = true
	} else if cw.UsedPercentage != nil {
		s.ContextPct, s.HasContext = *cw.UsedPercentage, true
	}
	if rl := in.RateLimits; rl != nil {
		s.FiveHour, s.SevenDay = rl.FiveHour.limit(), rl.SevenDay.limit()
	}
	return s
}

// userStatusTimeout bounds the user's own statusLine command.
const userStatusTimeout = 5 * time.Second

// StatusLine is Claude's statusLine command: it caches what the input says
// about the session for the replies' footer, /usage and the panel, and
// prints the line Claude shows: the user's own statusLine's output if they
// have one, else ccbridge's summary. It never fails loudly; the status
// line is not worth breaking Claude's screen for.
func StatusLine(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, getenv Env) int {
	raw, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		return 0
	}
	var in statusInput
	if err := json.Unmarshal(raw, &in); err != nil {
		fmt.Fprintln(stdout, "ccbridge")
		return 0
	}
	st := in.status(getenv(state.EnvSession), time.Now())
	root := getenv(state.EnvRuntimeDir)
	if root == "" {
		root = state.DefaultRuntimeDir()
	}
	d, err := state.Open(root)
	if err != nil {
		fmt.Fprintf(stderr, "ccbridge statusline: %v\n", err)
	}
	changed, err := cacheStatus(ctx, d, in.SessionID, st)
	if err != nil {
		fmt.Fprintf(stderr, "ccbridge statusline: %v\n", err)
	}
	if cmd := sessionStatusLine(ctx, d, in.SessionID, getenv("HOME"), in.Workspace.ProjectDir); cmd != "" {
		out, err := runUserStatusLine(ctx, cmd, raw, in.Cwd)
		if err != nil {
			fmt.Fprintf(stderr, "ccbridge statusline: your statusLine: %v\n", err)
		}
		_, _ = stdout.Write(out)
	} else {
		fmt.Fprintln(stdout, StatusText(st, time.Now()))
	}
	// After the line: Claude's screen does not wait for Discord.
	if changed {
		if err := editFooter(ctx, d, in.SessionID, st); err != nil {
			fmt.Fprintf(stderr, "ccbridge statusline: footer: %v\n", err)
		}
	}
	return 0
}

// cacheStatus stores the record unless it says what the stored one says,
// and reports whether it wrote it.
func cacheStatus(ctx context.Context, d *state.Dir, sid string, st state.Status) (bool, error) {
	if sid == "" || d == nil {
		return false, nil
	}
	statuses, err := state.OpenStatuses(d)
	if err != nil {
		return false, err
	}
	if cur, err := statuses.Get(sid); err == nil {
		cur.At = st.At
		if sameStatus(cur, st) {
			return false, nil
		}
	}
	return true, statuses.Cache(ctx, sid, st)
}

func sameStatus(a, b state.Status) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// keepUserStatusLines is how long a session's statusLine command is kept.
const keepUserStatusLines = 7 * 24 * time.Hour

// sessionStatusLine is the user's own statusLine command: the project's,
// read once per Claude session (as Claude Code reads the settings of the
// workspace it trusted) and then taken from the runtime dir, so a settings
// file written later in the project, or wherever the session cd'ed to,
// chooses nothing; else the one in the user's own ~/.claude/settings.json,
// theirs to change at any time. Without a session id (nothing to cache by)
// the project's is read each time.
func sessionStatusLine(ctx context.Context, d *state.Dir, sid, home, projectDir string) string {
	if cmd := projectStatusLine(ctx, d, sid, projectDir); cmd != "" {
		return cmd
	}
	if home == "" {
		return ""
	}
	return statusLineIn(filepath.Join(home, ".claude", "settings.json"))
}

func projectStatusLine(ctx context.Context, d *state.Dir, sid, projectDir string) string {
	if projectDir == "" {
		return "" // the project is the one Claude names, never the cwd
	}
	read := func() string {
		return statusLineIn(filepath.Join(projectDir, ".claude", "settings.local.json"), filepath.Join(projectDir, ".claude", "settings.json"))
	}
	if d == nil || sid == "" {
		return read()
	}
	cmds, err := state.OpenUserStatusLines(d)
	if err != nil {
		return read()
	}
	if c, err := cmds.Get(sid); err == nil {
		return c.Command
	}
	cmd := read()
	if created, err := cmds.Create(ctx, sid, state.UserStatusLine{Command: cmd, At: time.Now().UTC()}); err == nil && created {
		// Once per session: forget those of sessions long gone.
		_, _ = cmds.Prune(ctx, time.Now().Add(-keepUserStatusLines), 1000)
	} else if c, err := cmds.Get(sid); err == nil {
		return c.Command // another run read it first
	}
	return cmd
}

// statusLineIn is the statusLine command of the first of files that names
// one (Claude's order of precedence: local, project, user). ccbridge's own,
// which Claude takes from --settings over all of these, is skipped wherever
// it turns up.
func statusLineIn(files ...string) string {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc struct {
			StatusLine *struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"statusLine"`
		}
		if json.Unmarshal(b, &doc) != nil || doc.StatusLine == nil {
			continue
		}
		c := strings.TrimSpace(doc.StatusLine.Command)
		if c == "" || (doc.StatusLine.Type != "" && doc.StatusLine.Type != "command") || isOurStatusLine(c) {
			continue
		}
		return c
	}
	return ""
}

func isOurStatusLine(cmd string) bool {
	return strings.Contains(cmd, "ccbridge-hook-stop") && strings.HasSuffix(cmd, " "+StatusLineArg)
}

// runUserStatusLine runs cmd with sh -c, as Claude would, with the same
// input, and returns its output. (os.StartProcess, not os/exec: the hooks
// stay out of the exec seam, which belongs to the daemon.)
func runUserStatusLine(ctx context.Context, cmd string, input []byte, dir string) ([]byte, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", cmd}, &os.ProcAttr{Dir: dir, Env: os.Environ(), Files: []*os.File{inR, outW, os.Stderr},
		Sys: &syscall.SysProcAttr{Setpgid: true}})
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	go func() {
		_, _ = inW.Write(input)
		inW.Close()
	}()
	ctx, cancel := context.WithTimeout(ctx, userStatusTimeout)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL) // the whole group: sh and what it started
	}()
	out, rerr := io.ReadAll(io.LimitReader(outR, 64<<10))
	outR.Close()
	ps, werr := p.Wait()
	if rerr != nil {
		return out, rerr
	}
	if werr != nil {
		return out, werr
	}
	if !ps.Success() {
		return out, fmt.Errorf("%s", ps)
	}
	return out, nil
}

// StatusText is the one-line summary of a status: the footer of replies
// (without Discord's subtext marker) and ccbridge's status line.
func StatusText(s state.Status, now time.Time) string { return s.Summary(now) }

// untilText writes a wait like 2h30m, 45m or 3d4h.
func untilText(d time.Duration) string { return state.Until(d) }
